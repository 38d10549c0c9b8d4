# A failed job's outputs are kept, and redone by the next run.
#
# Snakemake removes a job's outputs before it runs and after it fails. The rules flag theirs
# `update` (all but the outputs too large to copy: corpus shards, token arrays, pretraining, which
# resumes from its own state), so Snakemake backs them up and restores them when the job fails.
# Left at that, the restored copy would pass for the new config's result: it is newer than the
# inputs that changed (a fresh copy), and Snakemake records the failed job's params and input
# checksums as if it had finished. So each restored output is outdated at once (its files'
# times set to the epoch, pipeline/files.py:outdate) and its record dropped: the bytes stay, the
# next run redoes the job. Snakemake is pinned (constraints.txt); tests/test_workflow.py pins this.

from snakemake.persistence import FileBackupMixin, PersistenceBase

from pipeline.files import outdate

RESTORED = set()  # outputs restored after their job failed, in this run of Snakemake
_restore_output = FileBackupMixin.restore_output
_finished = PersistenceBase.finished


def restore_outdated(self, path):
    restored = _restore_output(self, path)
    if restored:
        outdate(path)
        RESTORED.add(str(path))
    return restored


async def finished_unless_restored(self, job):
    await _finished(self, job)
    for output in job.output:
        if str(output) in RESTORED:
            self.cleanup_metadata(output)


FileBackupMixin.restore_output = restore_outdated
PersistenceBase.finished = finished_unless_restored
