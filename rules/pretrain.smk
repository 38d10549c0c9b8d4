# Shared initial weights per size, then one pretraining run per planned run (pipeline/pretrain/plan.py):
# from scratch, two-stage or continued; a run that starts from another run depends on it.
# Interrupted runs keep their resumable state in results/resume/ and continue from it
# when rerun (the default profile sets --rerun-incomplete).
#
# A pretraining job asks for hardware.gpus_per_run GPUs (`resources: gpu=`; 0 on the CPU
# default). With more than one it runs under torchrun, one process per GPU (DDP, or FSDP
# where pretraining.compute says so); with one, in-process; with none, in-process too unless
# hardware.cpu_processes_per_run asks for several gloo processes (config/rehearsal.yaml).
# The launcher and device derive from the job's resources, so `--set-resources pretrain:gpu=4` changes them and, like
# any resource, reruns nothing: results do not depend on the process count beyond rounding.

from snakemake_interface_executor_plugins.settings import ExecMode

if CFG.hardware.print_cost_estimate and workflow.exec_mode == ExecMode.DEFAULT:
    # Printed while the workflow is planned (so with -n too), once, not again inside cluster jobs.
    from snakemake.logging import logger

    from pipeline.workflow.cost import over_memory
    from pipeline.workflow.cost_printout import format_estimate
    from pipeline.workflow.job_resources import format_requests

    logger.info(format_estimate(CFG, RESOLVED, " + ".join(Path(f).name for f in reversed(workflow.configfiles))))
    logger.info(format_requests(CFG, PLANS, JOBS, rerun.gpu_jobs()))
    for size in over_memory(CFG, PLANS):
        if size.endswith(" fine-tuning"):
            logger.warning(f"{size} is estimated to exceed {CFG.hardware.gpu_memory_gb:g} GB on its GPU:"
                           " lower finetuning.micro_batch_size (gradients accumulate to the same batch)")
        else:
            logger.warning(f"pretraining at size {size!r} is estimated to exceed {CFG.hardware.gpu_memory_gb:g} GB per GPU:"
                           f" lower pretraining.compute.by_size.{size}.micro_batch_size or shard it (sharding: fsdp)")


from pipeline.workflow.job_resources import check_job_limits

try:
    # A job the cluster's limits cannot hold stops the plan, before anything is submitted.
    check_job_limits(CFG, PLANS, JOBS, rerun.gpu_jobs())
except ValueError as error:
    sys.exit(f"error: {error}")


def pretrain_processes(resources) -> int:
    """Processes of a pretraining job: one per GPU, or hardware.cpu_processes_per_run on CPUs."""
    return resources.gpu if resources.gpu > 0 else CFG.hardware.cpu_processes_per_run


def pretrain_launcher(wildcards, resources):
    """torchrun with one process per GPU (or CPU process) when the job has several, else this Python (words, each quoted by the rule)."""
    if pretrain_processes(resources) > 1:
        return [PYTHON, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(pretrain_processes(resources))]
    return [PYTHON]


# The initial weights of a size and pretraining seed, named as the untrained baseline they
# also are: results/init/random-tiny, results/init/random_r1-tiny, ...
rule initialize:
    input:
        "results/tokenizer",
    output:
        update(directory(OUTPUTS["initialize"])),
    wildcard_constraints:
        name=f"{RANDOM_INIT}(_r[1-9][0-9]*)?",
    params:
        **rule_params("initialize"),
    log:
        "logs/initialize/{name}-{size}.log",
    benchmark:
        "benchmarks/initialize/{name}-{size}.tsv"
    shell:
        "{PYTHON:q} -m pipeline initialize --size {params.size:q} --max-length {params.max_length:q}"
        " --seed {params.seed:q} --tokenizer {input:q} --out {output:q} > {log:q} 2>&1"


rule pretrain:
    input:
        tokens=INPUTS.pretrain_tokens,
        start=INPUTS.pretrain_start,
    output:
        model=directory("results/pretrain/{name}-{size}/model"),
        checkpoints=directory("results/pretrain/{name}-{size}/checkpoints"),
        log="results/pretrain/{name}-{size}/log.csv",
        summary=OUTPUTS["pretrain"],
    params:
        **rule_params("pretrain"),
        launcher=pretrain_launcher,
        device=job_device,
    threads: job_threads("pretrain", on_cpus=CFG.hardware.cpu_processes_per_run)  # a CPU process per core
    # Pretraining is the critical path: with a core free, start the next run before the
    # fine-tuning jobs of finished ones (priority reruns nothing).
    priority: 10
    resources:
        **job_resources("pretrain"),
    log:
        "logs/pretrain/{name}-{size}.log",
    benchmark:
        "benchmarks/pretrain/{name}-{size}.tsv"
    shell:
        "{params.launcher:q} -m pipeline pretrain --spec {params.spec:q} --tokens {params.tokens:q} --init {params.start:q}"
        " --work-dir {params.work_dir:q} --out {params.out:q} --threads {threads:q} --device {params.device:q} > {log:q} 2>&1"
