# Production image: gunicorn web, Celery worker and beat all run from it (see docker-compose.yml).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /app
# Tesseract's language data for the pages of scanned PDFs (ingest.ocr reads them in process through tesserocr);
# add tesseract-ocr-<lang> for each OCR_LANGUAGES entry.
# LibreOffice headless lays out DOCX, PPTX, XLSX, EPUB and HTML originals as PDF pages (ingest.office_pdf).
RUN apt-get update && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng \
    libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui \
    && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml ./
COPY . .
# var/ (static root, the int8 ONNX embedding model) is written by the app at run time.
RUN pip install --no-cache-dir . && useradd --create-home app && mkdir -p /data/media /app/var \
    && chown app /data/media /app/var
USER app
EXPOSE 8000
CMD ["gunicorn", "config.wsgi", "-b", "0.0.0.0:8000", "-w", "3", "--threads", "4"]
