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
#
# A backup still there when a job starts was left by a run killed during that job (a job that
# finishes or fails removes its own, and this run holds the output's lock, so no live run owns it).
# Snakemake would fail on it with FileExistsError, every run, until someone deleted it by hand; here
# it gives way to the backup of the output as it is now (which the killed job never replaced:
# every job writes its outputs whole, in one rename).

from snakemake.persistence import FileBackupMixin, PersistenceBase

from pipeline.files import outdate

RESTORED = set()  # outputs restored after their job failed, in this run of Snakemake
_backup_output = FileBackupMixin.backup_output
_restore_output = FileBackupMixin.restore_output
_finished = PersistenceBase.finished


def backup_replacing_stale(self, path):
    self.cleanup_backup(path)
    _backup_output(self, path)


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


FileBackupMixin.backup_output = backup_replacing_stale
FileBackupMixin.restore_output = restore_outdated
PersistenceBase.finished = finished_unless_restored
