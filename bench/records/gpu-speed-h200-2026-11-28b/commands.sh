#!/usr/bin/env bash
# One device call (2026-11-28, second H200 lease): issue 55's attempts in priority order under one deadline.
set -uo pipefail
out=/tmp/speed; mkdir -p "$out"; exec > >(tee "${1:?out}/summary.txt") 2>&1; deadline=$((SECONDS + ${BUDGET_SECONDS:-530}))
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD:$PWD/bench:/tmp/liger" TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1
python3 -m pip install -q --no-index --no-deps --target /tmp/liger bench/wheels/liger_kernel-*.whl || echo "no liger"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit --format=csv | tee "$out/gpu.txt"
P=(python3 bench/pretrain_throughput.py --tokens results/tokens --tokenizer results/tokenizer --device cuda --precision bf16
   --fused-optimizer --compile --samples split --sequence-length 2048 --batch-size 32 --vocab-size 128256 --threads 8 --steps 8 --warmup 4)
run() {  # run NAME CAP COMMAND...: under min(CAP, what is left), output in OUT/NAME.log, its table to stdout
    local name="$1" cap="$2" left=$((deadline - SECONDS)); shift 2
    [ $left -lt 25 ] && { echo "== $name: skipped (deadline)"; return 3; }
    [ $cap -gt $left ] && cap=$left
    echo "== $name (cap ${cap}s, t=${SECONDS}s): ${*:3}"
    timeout "$cap" "$@" > "$out/$name.log" 2>&1; local rc=$?
    if [ $rc -eq 0 ]; then sed -n '/^| /,$p' "$out/$name.log"; else echo "failed rc=$rc: $(grep -m1 -E 'Error|error' "$out/$name.log" | cut -c1-300)"; fi
    echo "   (done t=${SECONDS}s)"; return $rc
}
run base 75 "${P[@]}" --size 210m --micro-batch-size 32 --no-trainer --repeats 2 --json "$out/base.json"
fast=(--attention flex --lm-head liger)
run flexliger 85 "${P[@]}" --size 210m --micro-batch-size 32 --no-trainer --repeats 2 "${fast[@]}" --compare-losses "$out/base.json" --json "$out/flexliger.json" \
  || { fast=(--lm-head liger); run liger 70 "${P[@]}" --size 210m --micro-batch-size 32 --no-trainer --repeats 2 "${fast[@]}" --compare-losses "$out/base.json" --json "$out/liger.json"; }
run 610m-mb16 90 "${P[@]}" --size 610m --micro-batch-size 16 --no-trainer --repeats 1 "${fast[@]}" --json "$out/610m-mb16.json"
run 1b-mb16 110 "${P[@]}" --size 1b --micro-batch-size 16 --no-trainer --repeats 1 "${fast[@]}" --json "$out/1b-mb16.json"
F=(python3 bench/finetune_throughput.py --inputs results --size 210m --vocab-size 128256 --device cuda --threads 8 --steps 12 --points 2)
run finetune-210m-a 60 "${F[@]}" --tasks sentiment news_qa --json "$out/finetune-210m-a.json"
run finetune-210m-b 60 "${F[@]}" --tasks title_search proper_nouns --json "$out/finetune-210m-b.json"
run trainer-mb16 75 "${P[@]}" --size 210m --micro-batch-size 32 --trainer-micro-batch-size 16 --repeats 1 "${fast[@]}" --json "$out/trainer-mb16.json"
run packed 60 "${P[@]}" --size 210m --micro-batch-size 32 --no-trainer --repeats 2 --samples packed --lm-head liger --json "$out/packed.json"
run liger-layers 60 "${P[@]}" --size 210m --micro-batch-size 32 --no-trainer --repeats 1 "${fast[@]}" --liger-layers --compare-losses "$out/base.json" --json "$out/liger-layers.json"
run graphs 60 "${P[@]}" --size 210m --micro-batch-size 32 --no-trainer --repeats 1 "${fast[@]}" --compile-mode reduce-overhead --compare-losses "$out/base.json" --json "$out/graphs.json"
tar czf "$1/speed.tar.gz" -C "$out" . && echo "packed $(du -h "$1/speed.tar.gz" | cut -f1)"
