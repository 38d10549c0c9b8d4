#!/usr/bin/env bash
# The packages a pipeline job imports that the GPU machine's image lacks (its list:
# /work/.library/device/KINDS.md), as wheels for its Python 3.12 on x86-64 Linux, at the versions
# constraints.txt pins, into bench/wheels/one_gpu (git ignores bench/wheels): what
# bench/one_gpu_miniature.sh installs there, since that machine reaches no package index.
# torch, transformers, numpy, pandas and the rest come from the image at its own versions.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(
    snakemake snakemake-interface-common snakemake-interface-executor-plugins snakemake-interface-logger-plugins
    snakemake-interface-report-plugins snakemake-interface-scheduler-plugins snakemake-interface-storage-plugins
    argparse-dataclass conda-inject configargparse connection-pool docutils dpath fastjsonschema gitdb gitpython
    humanfriendly immutables jsonschema jsonschema-specifications jupyter-core nbformat platformdirs pulp referencing
    rpds-py smart-open smmap tabulate throttler traitlets yte reretry
    datasets dill multiprocess evaluate mwparserfromhell
    weasyprint cffi pycparser cssselect2 pydyf pyphen tinycss2 tinyhtml5 webencodings brotli zopfli
    liger-kernel  # config/paper.yaml's pretraining.compute.lm_head: liger (the `gpu` extra)
)
mkdir -p bench/wheels/one_gpu
for name in "${packages[@]}"; do
    pinned=$(grep -i -m1 "^${name//-/[-_.]}==" constraints.txt || true)
    requirement="${pinned:-$name}"
    # a wheel for the GPU machine's Python and platform; a package published as a source archive
    # alone (pure Python: connection_pool, ...) is built into a wheel here
    python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d bench/wheels/one_gpu "$requirement" 2>/dev/null \
        || python3 -m pip wheel --quiet --no-deps -w bench/wheels/one_gpu "$requirement"
done
du -sh bench/wheels/one_gpu
