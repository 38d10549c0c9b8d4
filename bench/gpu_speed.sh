#!/usr/bin/env bash
# Issue 44's GPU attempts in one command, under 8 minutes on one H100 (bench/gpu_acceptance.sh's sibling):
#   bench/gpu_speed.sh OUT_DIR
# Each attempt is one bench/pretrain_throughput.py run at the paper's 210M preset (2,048 tokens, bf16,
# vocabulary 128,256, fused AdamW, batch 32) writing OUT_DIR/<attempt>.{json,log}; a failed attempt
# (out of memory, no flash kernel, no Liger) is logged and the next one runs. In order of expected gain:
#   mb8 (with the Trainer, the baseline) -> mb16 -> mb32: larger micro-batches, fewer accumulation steps;
#   then, at the fastest micro-batch: trainer-mbN (the Trainer beside it at its own largest micro-batch that fits,
#   for the ratio), flex (FlexAttention's block mask
#   for the split samples: pretraining.compute.attention flex; kept if faster), packed (whole blocks: what split costs),
#   liger (Liger Kernel's fused linear cross-entropy), liger-layers (its RMSNorm, SwiGLU and RoPE), model (whole-model compile), flash (SDPA restricted to the flash kernel: completes
#   only if it is taken, causal and bidirectional), graphs (compile mode reduce-overhead: CUDA graphs); then
#   best: those of the levers >= 2% faster than the fastest micro-batch with agreeing losses, together, beside the Trainer;
#   last the 610M and 1B presets at the largest micro-batch that fits. Every 210M attempt after mb8 compares its
#   last-step training losses with mb8's (same weights, tokens and masks: bf16 rounding alone may part them).
# Inputs as bench/gpu_acceptance.sh (results/ with the smoke config's tokens and tokenizer). Liger: the GPU
# machine reaches no index, so fetch its wheel here first and carry bench/wheels (git ignores it):
#   pip download --no-deps liger-kernel==0.8.5 -d bench/wheels
# The call's budget: no attempt starts after BUDGET_SECONDS (450: a device call of under 8 minutes with start-up),
# and none runs past it; what did not fit is written as skipped, so the results of what ran come back.
# PART=attempts runs the attempts at SIZE alone, PART=presets the 610M and 1B alone: two device calls where one is too short;
# PART=finetune (not in all) the fine-tuning MFU at 210M and 610M (bench/finetune_throughput.py; results/ must hold the stand-in
# tasks: snakemake ... results/data/tasks/{sentiment,proper_nouns,news_qa,title_search}/stats.json).
# Every attempt trains the samples config/paper.yaml trains (SAMPLES=split: the study's cut samples; packed for
# 2,048-token blocks, as until 2026-11-28), shares one inductor cache (INDUCTOR_CACHE, default OUT_DIR/inductor-cache:
# carry it back in and the next call compiles nothing it compiled before), and gets a fair share of what is left
# of the budget (at least 60 s), so a compile that hangs costs its own turn, not the others'.
# Without a GPU, DEVICE=cpu SIZE=tiny LENGTH=64 BATCH=8 VOCAB=4096 THREADS=2 bench/gpu_speed.sh /tmp/dry dry-runs the plumbing.
set -uo pipefail
cd "$(dirname "$0")/.."
out="$(realpath "${1:?give an output directory}")"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
python="${PYTHON:-python3}"
device="${DEVICE:-cuda}" size="${SIZE:-210m}" length="${LENGTH:-2048}" batch="${BATCH:-32}"
vocab="${VOCAB:-128256}" threads="${THREADS:-8}" budget="${BUDGET_SECONDS:-450}" part="${PART:-all}"
samples="${SAMPLES:-split}"  # what config/paper.yaml trains (the study's cut samples); SAMPLES=packed for 2,048-token blocks
# One inductor cache for every attempt (and, carried back in, for the next call): a graph compiled
# once is not compiled again, which took most of 2026-11-28's 390 seconds.
export TORCHINDUCTOR_CACHE_DIR="${INDUCTOR_CACHE:-$out/inductor-cache}" TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1
case "$part" in all | attempts | presets | finetune) ;; *) echo "error: bench/gpu_speed.sh: PART=$part: give all, attempts, presets or finetune" >&2; exit 2 ;; esac
precision=bf16
[ "$device" = cpu ] && precision=fp32
if [ "$device" = cuda ] && ! "$python" -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
    echo "error: bench/gpu_speed.sh: no CUDA device visible (DEVICE=cpu SIZE=tiny ... dry-runs the plumbing)" >&2
    exit 2
fi
if ! "$python" -c "import liger_kernel" 2>/dev/null && compgen -G "bench/wheels/liger_kernel-*.whl" >/dev/null; then
    "$python" -m pip install --quiet --no-deps --no-index --target "$out/site" bench/wheels/liger_kernel-*.whl \
        && export PYTHONPATH="$PYTHONPATH:$out/site"
fi

compare=()  # after mb8: --compare-losses mb8.json, each 210M attempt's last-step losses against today's path
timed() {  # timed NAME COMMAND...: COMMAND under its fair share of the call's budget, its output in OUT/NAME.log
    # (exit 3: not started, the budget is spent)
    local name="$1" left=$((budget - SECONDS))  # bash's SECONDS: seconds since this script started
    shift
    if [ $left -lt 20 ]; then
        echo "skipped: the call's ${budget}-second budget is spent" | tee -a "$out/summary.md"
        return 3
    fi
    # a fair share of what is left, so that one slow compile does not take the others' turn
    local cap=$((left / (remaining > 0 ? remaining : 1)))
    cap=$((cap < 60 ? (left < 60 ? left : 60) : cap))
    remaining=$((remaining - 1))
    timeout "$cap" "$@" > "$out/$name.log" 2>&1
}

summarize() {  # summarize NAME STATUS: NAME's table into summary.md, or why it failed
    if [ "$2" -eq 0 ]; then sed -n '/^| /,$p' "$out/$1.log" >> "$out/summary.md"
    elif [ "$2" -ne 3 ]; then echo "failed (exit $2): $(grep -m1 -E 'Error|error' "$out/$1.log" | cut -c1-300)" >> "$out/summary.md"; fi
}

attempt() {  # attempt NAME SIZE OPTIONS...: one throughput run, its table appended to summary.md
    local name="$1" run_size="$2" against=()
    shift 2
    [ "$run_size" = "$size" ] && against=("${compare[@]}")
    echo "== $name ($run_size): $*" | tee -a "$out/summary.md"
    timed "$name" "$python" bench/pretrain_throughput.py --tokens results/tokens --tokenizer results/tokenizer \
        --size "$run_size" --device "$device" --precision "$precision" --fused-optimizer --compile --samples "$samples" \
        --sequence-length "$length" --batch-size "$batch" --vocab-size "$vocab" --steps 8 --warmup 4 --repeats 2 --threads "$threads" \
        --json "$out/$name.json" "${against[@]}" "$@"
    local status=$?
    summarize "$name" $status
    return $status
}

beats() {  # beats NAME REFERENCE: NAME ran, ours is >= 2% faster than REFERENCE's for every objective (beyond run-to-run
    # noise: a 0.1% "win" of a CPU dry run picked CUDA graphs), and its losses agree
    "$python" - "$out/$1.json" "$out/$2.json" <<'PY' 2>/dev/null
import json, sys
attempt, reference = (json.load(open(path))["summary"] for path in sys.argv[1:])
ours = {kind: by_who["ours"] for kind, by_who in attempt.items()}
faster = all(row["tokens_per_second"] >= 1.02 * reference[kind]["ours"]["tokens_per_second"] for kind, row in ours.items())
sys.exit(not (faster and all(row.get("loss_versus_baseline", {"agrees": True})["agrees"] for row in ours.values())))
PY
}

size_attempts() {  # issue 44's item 1 at SIZE, in order of expected gain
    declare -A micro_of=([mb8]=$((batch / 4)) [mb16]=$((batch / 2)) [mb32]=$batch)  # batch 32: 4, 2 and 1 accumulation steps
    attempt mb8 "$size" --micro-batch-size "${micro_of[mb8]}"
    [ -f "$out/mb8.json" ] && compare=(--compare-losses "$out/mb8.json")
    attempt mb16 "$size" --micro-batch-size "${micro_of[mb16]}" --no-trainer
    attempt mb32 "$size" --micro-batch-size "${micro_of[mb32]}" --no-trainer
    best=mb8
    for name in mb16 mb32; do beats "$name" "$best" && best=$name; done
    micro=${micro_of[$best]}
    echo "fastest micro-batch: $micro ($best)" | tee -a "$out/summary.md"
    # The Trainer at its own largest micro-batch that fits (ours at our fastest), before the riskier attempts:
    # the ratio each at its best (the Trainer ran out of memory at 32 on 2026-11-28: 31.3 GiB of logits)
    for mb in "$batch" $((batch / 2)) $((batch / 4)); do
        attempt "trainer-mb$mb" "$size" --micro-batch-size "$micro" --trainer-micro-batch-size "$mb" && break
    done
    # Each attempt alone at the fastest micro-batch; those faster than it whose losses agree are kept, and run together with the Trainer.
    # flex first: split samples under FlexAttention's block mask (pretraining.compute.attention: flex), the study's
    # varlen saving; then packed, the same run on whole blocks, which split samples should cost at most 5% over.
    declare -A options_of=([flex]="--attention flex" [liger]="--lm-head liger" [liger-layers]="--liger-layers" [model]="--compile-scope model"
        [flash]="--sdpa-backend flash" [graphs]="--compile-mode reduce-overhead")
    kept=()
    if [ "$device" = cpu ]; then
        echo "flex: skipped on the CPU (FlexAttention has no backward there)" | tee -a "$out/summary.md"
    else
        attempt flex "$size" --micro-batch-size "$micro" --no-trainer --attention flex
        beats flex "$best" && kept+=(--attention flex)
    fi
    # its losses differ from mb8's by design (other samples): the comparison printed is not a check here
    attempt packed "$size" --micro-batch-size "$micro" --no-trainer --samples packed "${kept[@]}"
    for name in liger liger-layers model flash graphs; do
        read -ra options <<< "${options_of[$name]}"
        attempt "$name" "$size" --micro-batch-size "$micro" --no-trainer "${options[@]}"
        beats "$name" "$best" && kept+=("${options[@]}")
    done
    echo "kept: micro-batch $micro ${kept[*]}" | tee -a "$out/summary.md"
    [ ${#kept[@]} -gt 0 ] && attempt best "$size" --micro-batch-size "$micro" "${kept[@]}"  # with the Trainer: the ratio in one run
}

preset_attempts() {  # item 2: the 610M and 1B presets at the largest micro-batch that fits, with what SIZE kept
    # (PART=presets runs none at SIZE: PRESET_OPTIONS="--attention flex --lm-head liger" gives them)
    read -ra preset_options <<< "${PRESET_OPTIONS:-}"
    for preset in 610m 1b; do
        [ "$device" = cpu ] && continue  # the large presets are a GPU's
        for mb in 16 8 4 2 1; do
            attempt "$preset-mb$mb" "$preset" --micro-batch-size "$mb" --no-trainer --repeats 1 "${kept[@]}" "${preset_options[@]}" && break
        done
    done
}

finetune_attempts() {  # item 5: the real finetune job's tokens/s and MFU on the stand-ins of SST-2, CoNLL, SQuAD and MS MARCO
    # (bench/finetune_throughput.py: config/paper.yaml's protocol, bf16 weights, micro-batches of 8), at 210M and 610M
    local presets=(210m 610m) options=()
    [ "$device" = cpu ] && presets=("$size") options=(--precision fp32 --steps 4 --points 2 --max-length 128)
    for preset in "${presets[@]}"; do
        echo "== finetune-$preset" | tee -a "$out/summary.md"
        timed "finetune-$preset" "$python" bench/finetune_throughput.py --inputs results --size "$preset" --vocab-size "$vocab" \
            --device "$device" --threads "$threads" --json "$out/finetune-$preset.json" "${options[@]}"
        summarize "finetune-$preset" $?
    done
}

# attempts still to run (for each one's fair share of the budget): up to 14 at SIZE, then 610M and 1B, or fine-tuning's 2
remaining=0 kept=()
case "$part" in
    finetune) remaining=2 ;;
    *) [ "$part" = presets ] || remaining=$((remaining + 14))
       [ "$part" = attempts ] || [ "$device" = cpu ] || remaining=$((remaining + 2)) ;;
esac
case "$part" in
    finetune) finetune_attempts ;;
    *) [ "$part" = presets ] || size_attempts
       [ "$part" = attempts ] || preset_attempts ;;
esac
touch "$out/summary.md"
echo "summary: $out/summary.md"
