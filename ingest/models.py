"""Documents, their physical pages and their indexed chunks.

Ingest knows nothing of clauses. The document text is stored whole (pages joined
by ``\\f``) so every offset a citation carries can be checked against it.
"""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Func, Q
from pgvector.django import BitField, HnswIndex, VectorField

from engagements.models import Engagement

EMBEDDING_DIMENSIONS = 384


class Document(models.Model):
    ENGAGEMENT_PATH = "engagement"

    class Status(models.TextChoices):
        FETCHING = "fetching"  # a contract from a URL, before its bytes are in (ingest.url_intake)
        QUEUED = "queued"
        CONVERTING = "converting"
        CHUNKING = "chunking"
        EMBEDDING = "embedding"
        INDEXING = "indexing"
        READY = "ready"
        FAILED = "failed"
        NEEDS_OCR = "needs_ocr", "needs OCR"

    class TypeSource(models.TextChoices):
        """Where ``doc_type`` came from; a type read from the title may be wrong (ingest.doctype)."""

        UPLOAD = "upload", "given at upload"
        TITLE = "title", "read from its title"
        ADMIN = "admin", "set by an admin"
        MODEL = "model", "read by Claude"  # or, with no type, asked of Claude without an answer

    engagement = models.ForeignKey(Engagement, on_delete=models.CASCADE, related_name="documents")
    file = models.FileField(upload_to="documents/%Y/%m/", max_length=500)
    original_name = models.CharField(max_length=300)
    sha256 = models.CharField(max_length=64, blank=True)  # blank only while the document is being fetched
    size_bytes = models.BigIntegerField(default=0)
    title = models.CharField(max_length=300)
    doc_type = models.CharField(max_length=100, blank=True)
    doc_type_source = models.CharField(max_length=8, choices=TypeSource.choices, blank=True)
    kind = models.CharField(max_length=16, blank=True)  # pdf, docx, xlsx, pptx, epub, html, markdown, text
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    progress = models.PositiveSmallIntegerField(default=0)  # percent of the whole pipeline
    # what the running stage is doing, in words ("OCR page 37 of 212"); empty between stages and at the end
    progress_detail = models.CharField(max_length=120, blank=True)
    error = models.TextField(blank=True)
    error_code = models.CharField(max_length=32, blank=True)
    text = models.TextField(blank=True)
    page_count = models.PositiveIntegerField(default=0)
    # its rows in ingest_chunk, kept by the pipeline: a search weighs a document set's share of the table by
    # these (ingest.search.choose_method), without counting index entries
    chunk_count = models.PositiveIntegerField(default=0)
    pages_estimated = models.BooleanField(default=False)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    # The outbox of the pipeline (ingest.intake.requeue_unsent): when the workers were last asked to run it,
    # in the transaction that queued the document (null: its caller runs it), and the Celery signature to run
    # after it (an upload's "extract when ready"), so a queueing lost with its process can be sent again.
    pipeline_queued_at = models.DateTimeField(null=True, blank=True, editable=False)
    pipeline_then = models.JSONField(null=True, blank=True, editable=False)
    # A contract fetched from a URL (ingest.url_intake): the URL given, and when its bytes arrived.
    source_url = models.URLField(max_length=2000, blank=True)
    fetched_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["engagement", "sha256"], condition=~Q(sha256=""), name="one_document_per_content"
            )
        ]
        indexes = [models.Index(fields=["engagement", "status"])]

    def __str__(self):
        return self.title

    TERMINAL = frozenset({Status.READY, Status.FAILED, Status.NEEDS_OCR})  # the pipeline is done with it

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL


class DocumentStage(models.Model):
    """One row per pipeline stage of a document: the unit of work progress is derived from."""

    ENGAGEMENT_PATH = "document__engagement"

    class Name(models.TextChoices):
        CONVERT = "convert"
        CHUNK = "chunk"
        EMBED = "embed"
        INDEX = "index"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="stages")
    name = models.CharField(max_length=16, choices=Name.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    progress = models.PositiveSmallIntegerField(default=0)
    detail = models.CharField(max_length=300, blank=True)
    # Times this stage was started; a stage that keeps killing its worker (acks_late
    # redelivery of a poison file) is failed after a few attempts instead of looping.
    attempts = models.PositiveSmallIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["document", "name"], name="one_row_per_stage")]

    def __str__(self):
        return f"{self.document_id} {self.name} {self.status}"


class Page(models.Model):
    ENGAGEMENT_PATH = "document__engagement"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField()  # 1-based, physical (or estimated: see Document.pages_estimated)
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    # A page read by OCR (ingest.ocr; null: its text layer was kept): the mean confidence of its words
    # (0-100), and each word's [start, end) in the page text with its box as fractions of the page shown
    # (left, top, right, bottom), where a cited span's boxes are drawn from (ingest.pdf_boxes).
    ocr_confidence = models.FloatField(null=True, blank=True)
    ocr_words = models.JSONField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["document", "number"]
        constraints = [models.UniqueConstraint(fields=["document", "number"], name="one_row_per_page")]

    def __str__(self):
        return f"{self.document_id} p.{self.number}"


DOCUMENT_IDS: ArrayField = ArrayField(models.BigIntegerField())  # the type of ARRAY[document_id]


class Chunk(models.Model):
    ENGAGEMENT_PATH = "document__engagement"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    chunk_id = models.CharField(max_length=40)  # hash of the content, stable across runs
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    page_start = models.PositiveIntegerField()
    page_end = models.PositiveIntegerField()
    paragraph = models.PositiveIntegerField(default=0)
    section = models.CharField(max_length=500, blank=True)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True)
    search = models.GeneratedField(
        expression=SearchVector("text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    # One bit per dimension (its sign): the first pass of a vector search over many documents
    # (ingest.search.VECTOR_QUANTIZED_SQL) reads these 48 bytes from chunk_document_bits alone.
    embedding_bits = models.GeneratedField(
        expression=Func(
            F("embedding"),
            function="binary_quantize",
            template=f"%(function)s(%(expressions)s)::bit({EMBEDDING_DIMENSIONS})",
            output_field=BitField(length=EMBEDDING_DIMENSIONS),
        ),
        output_field=BitField(length=EMBEDDING_DIMENSIONS),
        db_persist=True,
    )

    class Meta:
        ordering = ["document", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="one_chunk_per_ordinal"),
            models.UniqueConstraint(fields=["document", "chunk_id"], name="unique_chunk_id_per_document"),
        ]
        indexes = [
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search"], name="chunk_search_gin"),
            # The text side of a search over some documents (ingest.search.DOCUMENT_IN): GIN intersects
            # the documents' entries with each stem's, skipping the rest of a common stem's posting
            # list (docs/decisions.md, chunk_document_search_gin). ARRAY[document_id] with the built-in
            # array opclass, not btree_gin: the embedded PostgreSQL ships no btree_gin.
            GinIndex(
                Func(F("document"), template="ARRAY[%(expressions)s]", output_field=DOCUMENT_IDS),
                F("search"),
                name="chunk_document_search_gin",
            ),
            # The documents' chunks with their bits, read by an index-only scan: a large document set's
            # Hamming pass touches none of the wide heap rows (docs/decisions.md, chunk_document_bits).
            models.Index(fields=["document"], include=["id", "embedding_bits"], name="chunk_document_bits"),
        ]

    def __str__(self):
        return f"{self.document_id}:{self.ordinal} {self.chunk_id}"


class EmbeddingCache(models.Model):
    """Embeddings keyed by (model name, content hash): unchanged text is never embedded twice."""

    model_name = models.CharField(max_length=100)
    content_hash = models.CharField(max_length=64)
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["model_name", "content_hash"], name="one_embedding_per_key")
        ]

    def __str__(self):
        return f"{self.model_name} {self.content_hash}"
