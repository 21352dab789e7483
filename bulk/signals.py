"""Signal receivers of the bulk app, connected in ``BulkConfig.ready``.

The services say that there is work (``bulk.service.bulk_run_created``, ``bulk.cancel.cancel_requested``);
the receivers here queue it through ``bulk.tasks``, so no service imports the tasks module.
"""

from __future__ import annotations

from django.db.models.signals import pre_delete
from django.dispatch import receiver

from bulk import cancel, tasks
from bulk.models import BatchJob
from bulk.service import bulk_run_created
from ingest.models import Document

# A batch whose requests are deleted is canceled at the API: its id is taken before its rows go.
pre_delete.connect(cancel.on_job_delete, sender=BatchJob, dispatch_uid="bulk.cancel.job")
pre_delete.connect(cancel.on_document_delete, sender=Document, dispatch_uid="bulk.cancel.document")


@receiver(bulk_run_created, dispatch_uid="bulk.submit_run")
def submit_new_run(sender, *, run_id: int, **kwargs) -> None:
    """A bulk run's requests are submitted by a worker once its rows are committed."""
    tasks.submit_soon(run_id)


@receiver(cancel.cancel_requested, dispatch_uid="bulk.cancel_batches")
def cancel_batches(sender, *, batch_ids, **kwargs) -> None:
    """Batches whose requests were deleted are canceled by a worker, one task each."""
    tasks.queue_cancels(batch_ids)
