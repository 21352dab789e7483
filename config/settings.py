"""Settings, read from the environment (see README "Configuration").

Unset ``DATABASE_URL`` / ``REDIS_URL`` mean embedded services under ``EMBEDDED_DIR``
(default ``var/``). Reading these settings starts nothing: each embedded service starts
when a process first connects to it (see :mod:`config.embedded`).
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from celery.schedules import crontab

from config import embedded

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and os.environ.get("DJANGO_REQUIRE_SECRET", "") == "1":
        raise RuntimeError("DJANGO_SECRET_KEY must be set when DEBUG is off in production.")
    # Development/test only: a per-checkout key kept in var/, never in the repository.
    _key_file = BASE_DIR / "var" / "secret_key"
    _key_file.parent.mkdir(parents=True, exist_ok=True)
    if not _key_file.exists():
        import secrets

        _key_file.write_text(secrets.token_urlsafe(50))
    _key_file.chmod(0o600)  # readable by this user only: whoever reads the key can forge sessions
    SECRET_KEY = _key_file.read_text().strip()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "engagements",
    "taskstate",
    "ingest",
    "extraction",
    "bulk",
    "reviewer",
    "dashboards",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "config.uploads.UploadLimitsMiddleware",  # before the CSRF check parses an upload's body
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "reviewer.login.HtmxLoginRequiredMiddleware",  # LoginRequiredMiddleware; htmx: 401 + HX-Redirect
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.security.ContentSecurityPolicyMiddleware",
    "config.security.PrivatePagesMiddleware",
]

ROOT_URLCONF = "config.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dashboards.context_processors.dashboards_nav",
            ],
        },
    },
]
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

# --------------------------------------------------------------------------- services
EMBEDDED_DIR = Path(os.environ.get("EMBEDDED_DIR", BASE_DIR / "var"))
# The embedded services this process uses; config.embedded.ensure starts one as its first connection opens.
EMBEDDED_SERVICES: list[str] = []

DATABASE_URL = os.environ.get("DATABASE_URL", "")
if not DATABASE_URL:
    DATABASE_URL = embedded.postgres_url(EMBEDDED_DIR, start=False)
    EMBEDDED_SERVICES.append("postgres")
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL,
        conn_max_age=60,
        conn_health_checks=True,
        # embedded: Django's PostgreSQL backend, which starts the server before it connects; else the URL's
        engine="config.embedded_postgres" if "postgres" in EMBEDDED_SERVICES else None,
    )
}

REDIS_URL = os.environ.get("REDIS_URL", "")
if not REDIS_URL:
    REDIS_URL = embedded.redis_url(EMBEDDED_DIR, start=False)
    EMBEDDED_SERVICES.append("redis")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --------------------------------------------------------------------------- auth
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Failed logins allowed per (username, client address) within LOGIN_THROTTLE_WINDOW seconds, counted in the
# database (reviewer.login says why not in the cache).
LOGIN_THROTTLE_LIMIT = int(os.environ.get("LOGIN_THROTTLE_LIMIT", "5"))
LOGIN_THROTTLE_WINDOW = int(os.environ.get("LOGIN_THROTTLE_WINDOW", "300"))
# Failed logins allowed per client address across usernames (password spraying) within the address window;
# see docs/decisions.md.
LOGIN_THROTTLE_ADDRESS_LIMIT = int(os.environ.get("LOGIN_THROTTLE_ADDRESS_LIMIT", "20"))
LOGIN_THROTTLE_ADDRESS_WINDOW = int(os.environ.get("LOGIN_THROTTLE_ADDRESS_WINDOW", "900"))
# Proxies in front that append to X-Forwarded-For (0: served straight); see config/client_address.py.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))

# Sessions in the database, not the Redis cache: signed-in people keep working while Redis is down.
SESSION_ENGINE = "django.contrib.sessions.backends.db"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# --------------------------------------------------------------------------- i18n, files
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = True  # serve straight from static/ (small app; no collectstatic step needed)
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "var" / "media"))
MEDIA_URL = "media/"  # never served directly: downloads go through scoped views
# Uploaded contracts are client data: readable by the app's own user and group (web, workers, backups), not
# by every account on the host (Django's default is 0o644 and the umask's directories).
FILE_UPLOAD_PERMISSIONS = 0o640
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o750
MAX_UPLOAD_BYTES = int(os.environ.get("MAX_UPLOAD_BYTES", str(100 * 1024 * 1024)))
# The drawn pages of PDF originals (MEDIA_ROOT/var/page-images) are kept up to this size, least recently used
# first out (ingest.page_view).
PAGE_IMAGE_CACHE_BYTES = int(os.environ.get("PAGE_IMAGE_CACHE_BYTES", str(1024 * 1024 * 1024)))
DATA_UPLOAD_MAX_NUMBER_FILES = int(
    os.environ.get("MAX_UPLOAD_FILES", "200")
)  # files in one upload (Django: 100)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Uploads over FILE_UPLOAD_MAX_MEMORY_SIZE are spooled here while they arrive: on the media volume, which the
# beat shares, so it can remove what a web process killed mid-upload left (config.uploads).
FILE_UPLOAD_TEMP_DIR = Path(os.environ.get("UPLOAD_TEMP_DIR", MEDIA_ROOT / "upload-tmp"))
try:
    FILE_UPLOAD_TEMP_DIR.mkdir(parents=True, exist_ok=True, mode=0o750)
except OSError:  # a read-only place: Django says so at the first large upload
    pass
# Contracts fetched from a URL (ingest.fetch): the size and time limits, the redirects followed, and the
# hosts allowed to resolve to addresses inside the network (every other host must resolve to public ones).
URL_FETCH_MAX_BYTES = int(os.environ.get("URL_FETCH_MAX_BYTES", str(MAX_UPLOAD_BYTES)))
URL_FETCH_TIMEOUT = float(os.environ.get("URL_FETCH_TIMEOUT", "30"))
URL_FETCH_MAX_REDIRECTS = int(os.environ.get("URL_FETCH_MAX_REDIRECTS", "5"))
URL_FETCH_ALLOWED_HOSTS = [host.lower() for host in env_list("URL_FETCH_ALLOWED_HOSTS", "")]

# --------------------------------------------------------------------------- cache (Redis)
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL.replace("redis+socket://", "unix://"),
        "KEY_PREFIX": os.environ.get("CACHE_PREFIX", "cr"),
        # the embedded Redis starts as the cache opens its first connection
        "OPTIONS": {"pool_class": "config.embedded.RedisPool"} if "redis" in EMBEDDED_SERVICES else {},
    }
}

# --------------------------------------------------------------------------- Celery
CELERY_BROKER_URL = REDIS_URL  # embedded: started by the Celery app (config/celery.py) as it connects
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Redis serves lower numbers first; a task that names no priority goes at 6, in arrival order with the
# others (ingest.tasks sends a document's later stages at 3). Without it, kombu sends such a task at 0.
CELERY_TASK_DEFAULT_PRIORITY = 6
CELERY_TASK_TIME_LIMIT = int(os.environ.get("CELERY_TASK_TIME_LIMIT", "3600"))
CELERY_TASK_SOFT_TIME_LIMIT = int(os.environ.get("CELERY_TASK_SOFT_TIME_LIMIT", "3300"))
CELERY_TASK_IGNORE_RESULT = True  # state lives in taskstate.TaskState, not a result backend
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
# A message not acknowledged within this time (worker killed) is redelivered.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3700"))
}
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_BEAT_SCHEDULE_FILENAME = str(EMBEDDED_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "purge-old-task-states": {"task": "taskstate.tasks.purge_old_states", "schedule": 24 * 3600},
    "refresh-dashboards": {
        "task": "dashboards.tasks.refresh_dashboards",
        "schedule": crontab(minute=0, hour=5),
    },
    "weekly-silent-source-benchmark": {
        "task": "dashboards.tasks.weekly_silent_source",
        "schedule": crontab(minute=0, hour=1, day_of_week="sun"),
    },
    "bulk-poll-batches": {"task": "bulk.tasks.poll_batches", "schedule": 60.0},
    "fail-abandoned-clause-tasks": {"task": "extraction.tasks.fail_abandoned_tasks", "schedule": 15 * 60},
    "fail-stalled-documents": {"task": "ingest.tasks.fail_stalled_documents", "schedule": 15 * 60},
    "requeue-unsent-documents": {"task": "ingest.tasks.requeue_unsent_documents", "schedule": 5 * 60},
    "sweep-upload-temp-files": {"task": "ingest.tasks.sweep_upload_temp_files", "schedule": 3600},
}
# Seconds a queued document waits, with no task of its pipeline queued or running, before its pipeline is
# sent again (its queueing was lost with the process that saved it); see docs/decisions.md.
REQUEUE_UNSENT_AFTER = int(os.environ.get("REQUEUE_UNSENT_AFTER", "300"))
# What one document may cost, judged before its costly stages (pages and characters once converted, chunks
# before embedding); over a limit it fails "too_large", in words naming it. See docs/decisions.md.
MAX_DOCUMENT_PAGES = int(os.environ.get("MAX_DOCUMENT_PAGES", "10000"))
MAX_DOCUMENT_CHARS = int(os.environ.get("MAX_DOCUMENT_CHARS", "30000000"))
MAX_DOCUMENT_CHUNKS = int(os.environ.get("MAX_DOCUMENT_CHUNKS", "20000"))
# A document of more chunks is embedded and indexed on INGEST_LARGE_QUEUE, which a worker of its own serves
# (scripts/run_stack.py, docker-compose.yml), so very large documents wait for each other, not every upload.
LARGE_DOCUMENT_CHUNKS = int(os.environ.get("LARGE_DOCUMENT_CHUNKS", "2000"))
INGEST_LARGE_QUEUE = os.environ.get("INGEST_LARGE_QUEUE", "large")

# OCR of scanned PDF pages (ingest.ocr, Tesseract): its languages, "+"-joined Tesseract names ("eng+deu"; each
# needs its Debian tesseract-ocr-<lang> package), and how many pages one worker reads at once (0: its cores).
OCR_LANGUAGES = os.environ.get("OCR_LANGUAGES", "eng")
OCR_WORKERS = int(os.environ.get("OCR_WORKERS", "0"))

# --------------------------------------------------------------------------- product
ANTHROPIC_API_KEY = os.environ.get("ANTHROPIC_API_KEY", "")
EXTRACTION_ENGINE = os.environ.get("EXTRACTION_ENGINE", "auto")  # auto | anthropic | offline
if EXTRACTION_ENGINE not in {"auto", "anthropic", "offline"}:
    raise RuntimeError(f"EXTRACTION_ENGINE must be auto, anthropic or offline, not {EXTRACTION_ENGINE!r}")
# the clause finder fitted on cuad-train (extraction/finder/artifact): a ranked list in retrieval's fusion
# for both engines, and presence and span choice in the offline engine
CLAUSE_FINDER = env_bool("CLAUSE_FINDER", True)
# another artifact's folder in place of the committed one (empty: the committed one); the folds that
# ``train_clause_finder --folds-out`` writes are evaluated on the contracts they never saw this way
CLAUSE_FINDER_DIR = os.environ.get("CLAUSE_FINDER_DIR", "")
ANTHROPIC_MODEL = os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-6")
ANTHROPIC_BASE_URL = os.environ.get("ANTHROPIC_BASE_URL", "")  # empty: the SDK's default endpoint
ANTHROPIC_MAX_RETRIES = int(os.environ.get("ANTHROPIC_MAX_RETRIES", "4"))  # 429/500/529, exponential backoff
ANTHROPIC_TIMEOUT = float(os.environ.get("ANTHROPIC_TIMEOUT", "120"))
ANTHROPIC_MAX_TOKENS = int(
    os.environ.get("ANTHROPIC_MAX_TOKENS", "4096")
)  # doubled on stop_reason max_tokens
ANTHROPIC_CONTEXT_WINDOW = int(os.environ.get("ANTHROPIC_CONTEXT_WINDOW", "200000"))  # compaction at 80%
EXTRACTION_MAX_TURNS = int(
    os.environ.get("EXTRACTION_MAX_TURNS", "6")
)  # agent turns per clause (1 = single shot)
# The seed's rerank (extraction.agent.rerank): with the Claude engine, one call to a small model per clause
# question picks which K of the top CLAUDE_RERANK_POOL fused candidates the question is shown; off, the fused
# top K (docs/decisions.md, CLAUDE_RERANK). Never asked with the offline engine.
CLAUDE_RERANK = env_bool("CLAUDE_RERANK", False)
CLAUDE_RERANK_MODEL = os.environ.get("CLAUDE_RERANK_MODEL", "claude-haiku-5-5")
CLAUDE_RERANK_POOL = int(os.environ.get("CLAUDE_RERANK_POOL", "20"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"pgserver": {"level": "WARNING"}},
}
