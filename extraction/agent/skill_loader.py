"""Skills: one guide per important clause type, in ``extraction/agent/skills/<slug>/SKILL.md``.

Each file opens with front matter between ``---`` lines (``key: value``; at least
name, description, version; optionally clause_type) followed by the guide.
The prompt lists names and descriptions only; the body is loaded on demand by
the ``load_skill`` tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SKILLS_DIR = Path(__file__).resolve().parent / "skills"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    version: str
    clause_type: str
    body: str
    path: str


def _unquote(value: str) -> str:
    """A front matter value without the one pair of quotes around it, if it has one; quotes inside
    it, or a quote that only ends it ('headed "Exclusivity"'), are part of the value."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse_skill(text: str, path: str = "") -> Skill:
    """Parse a SKILL.md text. Raises ValueError when front matter is missing or incomplete."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError(f"{path or 'skill'}: missing front matter")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ValueError(f"{path or 'skill'}: unterminated front matter") from None
    meta: dict[str, str] = {}
    for line in lines[1:end]:
        if line.strip() and not line.lstrip().startswith("#"):
            key, sep, value = line.partition(":")
            if not sep:
                raise ValueError(f"{path or 'skill'}: bad front matter line {line!r}")
            meta[key.strip()] = _unquote(value.strip())
    missing = [k for k in ("name", "description", "version") if not meta.get(k)]
    if missing:
        raise ValueError(f"{path or 'skill'}: front matter lacks {', '.join(missing)}")
    body = "\n".join(lines[end + 1 :]).strip() + "\n"
    return Skill(meta["name"], meta["description"], meta["version"], meta.get("clause_type", ""), body, path)


@lru_cache(maxsize=4)
def _load_all(directory: str) -> tuple[Skill, ...]:
    base = Path(directory)
    if not base.is_dir():
        return ()
    skills = [parse_skill(p.read_text(encoding="utf-8"), str(p)) for p in sorted(base.glob("*/SKILL.md"))]
    return tuple(sorted(skills, key=lambda s: s.name))


def list_skills(directory: str | Path = SKILLS_DIR) -> list[tuple[str, str]]:
    """``[(name, description), ...]`` sorted by name: what the system prompt shows."""
    return [(s.name, s.description) for s in _load_all(str(directory))]


def all_skills(directory: str | Path = SKILLS_DIR) -> list[Skill]:
    return list(_load_all(str(directory)))


def load_skill(name: str, directory: str | Path = SKILLS_DIR) -> str:
    """The body of one skill (the ``load_skill`` tool result). KeyError if unknown."""
    for s in _load_all(str(directory)):
        if s.name == name:
            return f"# skill: {s.name} (v{s.version})\n\n{s.body}"
    raise KeyError(
        f"unknown skill {name!r}; available: {', '.join(x.name for x in _load_all(str(directory)))}"
    )


def skill_for_clause_type(clause_type: str, directory: str | Path = SKILLS_DIR) -> str | None:
    """Name of the skill written for a catalog clause type, if any."""
    for s in _load_all(str(directory)):
        if s.clause_type == clause_type:
            return s.name
    return None
