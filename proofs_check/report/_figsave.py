"""How every report figure is saved: a PNG at :data:`DPI` dots per inch and a vector PDF beside it."""
from __future__ import annotations

from pathlib import Path

#: resolution of the PNG figures (print quality; the PDF next to each is vector)
DPI = 200


def save(fig, path) -> list[Path]:
    """Save ``fig`` as ``path`` (PNG, :data:`DPI` dpi) and as the PDF next to it; return both paths."""
    path = Path(path)
    fig.savefig(path, dpi=DPI, format="png")
    pdf = path.with_suffix(".pdf")
    fig.savefig(pdf, format="pdf", metadata={"CreationDate": None})  # reproducible bytes
    return [path, pdf]
