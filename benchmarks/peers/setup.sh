#!/usr/bin/env bash
# Install the peer tools that the comparison measures (pymupdf4llm, docling, pdftotext, ocrmypdf+tesseract)
# and the document makers (texlive, LibreOffice). They are measurement only: a separate venv, never project deps.
set -euo pipefail
VENV=${PEERS_VENV:-/tmp/peers-venv}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

if [ "$(id -u)" = 0 ] && [ -z "${SKIP_APT:-}" ]; then
  need=()
  for pkg in texlive-latex-base texlive-latex-recommended texlive-fonts-recommended libreoffice-writer-nogui \
             poppler-utils tesseract-ocr tesseract-ocr-eng ocrmypdf img2pdf chromium fonts-dejavu fonts-liberation; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  python3.11 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --upgrade pip
# torch: the CPU build (a plain `torch` pulls CUDA wheels); docling brings its own layout/table code.
"$VENV/bin/pip" install -q "torch==2.13.0" "pymupdf>=2" pymupdf4llm docling
# minuscule itself (lite engine + checks) into the same venv, so one process runs every tool.
"$VENV/bin/pip" install -q -e "$ROOT[lite,eval]"
echo "peers venv ready: $VENV"
