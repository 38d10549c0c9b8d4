"""Do the portable CPU paths give the same bits on another processor kind? Digests of the default's
arithmetic on this machine and under QEMU's emulation of other x86-64 processors, by mode.

    apt-get install qemu-user                   # Debian: qemu-x86_64, user-mode emulation
    python bench/cpu_vendor_bits.py             # ~5 minutes on 2 cores

The libraries pick their kernels from what CPUID says (pipeline/cpu_paths.py): MKL by vendor and
instruction set, ATen, oneDNN and OpenBLAS by instruction set. ``qemu-x86_64 -cpu MODEL`` runs
this machine's own Python, torch and wheels under another processor's CPUID (an Intel Haswell: the
vendor MKL treats apart; an AMD EPYC of the first generation: AVX2 without AVX-512), and QEMU
computes every SSE/AVX/FMA instruction with IEEE-exact soft floats, so a digest that differs under
emulation differs because a library took another branch, not because the emulator rounds.

What is digested, in one subprocess per processor and mode: three steps of the default's tiny
backbone under causal (CLM) and bidirectional (MLM) attention, as both stages take them (every
Linear, attention, normalisation, GELU and cross-entropy, gradients clipped, then AdamW), once with
the fused AdamW the pipeline trains with and once with torch's default AdamW; a retrieval task's
normalised embeddings from the MLM model; and scikit-learn's L2 logistic regression on a fixed
sparse bag of tokens (the bag-of-words baseline's solver, on OpenBLAS). Printed: a table of the
digests' first 12 hex digits and, per mode, whether every processor agrees. The portable paths
must agree everywhere on what the pipeline computes; the native ones need not (where they do
not, that is what the pins are for); torch's default AdamW shows why the pipeline does not use it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from pipeline.cpu_paths import PORTABLE_PINS

REPO = Path(__file__).resolve().parent.parent
MODES = ("native", "portable")
ATTENTIONS = {"clm": "causal", "mlm": "bidirectional"}
# QEMU's CPU models: the processor kinds the host is not. TCG has no AVX-512, so both are AVX2 machines.
EMULATED = {"intel-haswell": "Haswell", "amd-epyc-zen1": "EPYC"}


def digest(*arrays) -> str:
    sha = hashlib.sha256()
    for array in arrays:
        sha.update(array.tobytes())
    return sha.hexdigest()


def backbone_digests() -> dict[str, str]:
    """sha256 of every parameter and loss after three steps as the pipeline takes them (gradients
    clipped, then the pipeline's AdamW: fused, as both stages run it, and torch's default beside it),
    by objective; and of a retrieval task's unit-length embeddings from the trained bidirectional model."""
    import torch
    import torch.nn.functional as F

    from pipeline.config import OptimizerSpec, SizeSpec
    from pipeline.model.backbone import BackboneSpec, build_language_model
    from pipeline.optimization import build_adamw

    config = yaml.safe_load((REPO / "config" / "default.yaml").read_text())
    vocab = config["tokenizer"]["vocab_size"]
    spec = BackboneSpec(SizeSpec(**config["sizes"]["tiny"]), vocab_size=vocab, max_length=128, pad_id=0, bos_id=1, eos_id=2, mask_id=3)
    ids = torch.randint(4, vocab, (4, 128), generator=torch.Generator().manual_seed(0))  # (batch, positions)
    found = {}
    for fused, optimizer_name in ((True, "fused AdamW"), (False, "default AdamW")):
        for objective, attention in ATTENTIONS.items():
            model = build_language_model(spec, attention, seed=0)
            optimizer = build_adamw(model, OptimizerSpec(), 1e-3, fused=fused)
            losses = []
            for _ in range(3):
                loss = model(input_ids=ids, labels=ids).loss
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
                losses.append(loss.detach())
            weights = (p.detach().numpy() for p in model.parameters())
            found[f"tiny {objective}, {optimizer_name}"] = digest(torch.stack(losses).numpy(), *weights)
            if attention == "bidirectional":
                with torch.no_grad():  # (batch, hidden) mean-pooled and normalised, as the retrieval task type embeds
                    hidden = model.base_model(input_ids=ids).last_hidden_state
                    found[f"embeddings, {optimizer_name}"] = digest(F.normalize(hidden.mean(dim=1), dim=-1).numpy())
    return found


def logistic_regression_digest() -> str:
    """sha256 of the coefficients of the bag-of-words baseline's solver on a fixed sparse problem."""
    import numpy as np
    import scipy.sparse
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    bags = scipy.sparse.random(400, 2000, density=0.02, random_state=rng, data_rvs=np.ones, format="csr")  # (examples, vocabulary)
    labels = rng.integers(0, 5, 400)
    model = LogisticRegression(C=1.0, max_iter=1000).fit(bags, labels)
    return digest(model.coef_, model.intercept_)


def one_process() -> dict:
    import torch
    from threadpoolctl import threadpool_info

    import pipeline  # noqa: F401  (applies the mode's pins before the libraries load)

    torch.set_num_threads(1)  # one thread: a reduction's split must not depend on the core count
    found = backbone_digests()
    found["logistic regression"] = logistic_regression_digest()
    openblas = sorted({pool.get("architecture", "?") for pool in threadpool_info() if pool["internal_api"] == "openblas"})
    return {"digests": found, "aten": torch.backends.cpu.get_cpu_capability(), "openblas": ",".join(openblas)}


def run(processor: str, mode: str) -> dict:
    argv = [sys.executable, __file__, "--one-process"]
    if processor != "host":
        argv = ["qemu-x86_64", "-cpu", EMULATED[processor], *argv]
    env = {k: v for k, v in os.environ.items() if k not in PORTABLE_PINS}
    env.update(PIPELINE_CPU_PATHS=mode, OMP_NUM_THREADS="1")
    done = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"error: {processor} {mode} exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one-process", action="store_true", help=argparse.SUPPRESS)  # a measurement's subprocess
    args = parser.parse_args()
    if args.one_process:
        print(json.dumps(one_process()))
        return
    if shutil.which("qemu-x86_64") is None:
        sys.exit("error: qemu-x86_64 not found: apt-get install qemu-user")
    processors = ["host", *EMULATED]
    seen = {(processor, mode): run(processor, mode) for mode in MODES for processor in processors}
    print("| mode | processor | ATen | OpenBLAS | " + " | ".join(seen["host", "native"]["digests"]) + " |")
    print("|---|---|---|---|" + "---|" * len(seen["host", "native"]["digests"]))
    for (processor, mode), found in seen.items():
        cells = " | ".join(f"`{value[:12]}`" for value in found["digests"].values())
        print(f"| {mode} | {processor} | {found['aten']} | {found['openblas']} | {cells} |")
    print()
    for mode in MODES:
        for name in seen["host", mode]["digests"]:
            agree = len({seen[processor, mode]["digests"][name] for processor in processors}) == 1
            print(f"{mode:8} {name:22} {'same bits on every processor' if agree else 'DIFFERS between processors'}")


if __name__ == "__main__":
    main()
