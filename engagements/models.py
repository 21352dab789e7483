"""A client audit (Engagement), who works on it (Membership) and in which role."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

DEFAULT_CONTEXT_K = 5  # extraction.retrieval.DEFAULT_K: the seed's top 5
MAX_CONTEXT_K = 20  # the rerank's pool (CLAUDE_RERANK_POOL): more is no longer a choice among candidates
POLICY_FACTS_SHAPE = 'Policy facts must be a JSON object, e.g. {"policy_cap": "$247.83"}.'


class Engagement(models.Model):
    name = models.CharField(max_length=200, unique=True)
    client = models.CharField(max_length=200, blank=True)
    # Policy facts pinned into every extraction prompt (CASE_FACTS), kept verbatim,
    # e.g. {"policy_cap": "$247.83"}.
    policy_facts = models.JSONField(default=dict, blank=True)
    # Chunks a clause question is shown when a contract is too long to be read whole (retrieval's top K).
    context_k = models.PositiveSmallIntegerField(
        "chunks per clause question",
        default=DEFAULT_CONTEXT_K,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_CONTEXT_K)],
        help_text=f"The passages of a long contract each clause question is shown (1 to {MAX_CONTEXT_K}).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def clean(self):
        if not isinstance(self.policy_facts, dict):
            raise ValidationError({"policy_facts": POLICY_FACTS_SHAPE})
        decimal = _first_decimal(self.policy_facts)
        if decimal is not None:
            key, value = decimal
            raise ValidationError(
                {
                    "policy_facts": (
                        f"{key} is a decimal number ({value!r} once read, not as typed): "
                        'write it as text, e.g. "$250,000.00", so that the prompts and reports keep it '
                        "exactly as written."
                    )
                }
            )

    @property
    def policy_cap(self) -> str:
        return str(self.policy_facts.get("policy_cap", ""))


def _first_decimal(value, key: str = "policy facts") -> tuple[str, float] | None:
    """The first JSON number with a fraction or exponent in ``value``, with the key it is under. Read as a
    float it has lost its written form (250000.00 is 250000.0, a 17-digit amount 1.2345678901234568e+16),
    and CASE_FACTS pins values verbatim."""
    if isinstance(value, float):
        return key, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = _first_decimal(v, str(k) if isinstance(value, dict) else key)
        if found is not None:
            return found
    return None


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    AUDITOR = "auditor", "Auditor"
    MANAGER = "manager", "Manager"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    engagement = models.ForeignKey(Engagement, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "engagement"], name="one_membership_per_engagement")
        ]

    def __str__(self):
        return f"{self.user} · {self.engagement} · {self.role}"
