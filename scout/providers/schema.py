"""The structured outputs a provider returns, as pydantic models (their schema goes to the model).

Sizes are bounded here so an over-long reply is a provider failure, not something printed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_ANSWER_CHARS = 20_000
MAX_REASON_CHARS = 2_000


class AnswerOutput(BaseModel):
    """An answer with ``[n]`` markers and the passages it cites, or a decline with a reason."""

    model_config = ConfigDict(extra="forbid")

    answer: str = Field(
        max_length=MAX_ANSWER_CHARS,
        description="The answer in prose, citing passages with [n] markers; empty when declined.",
    )
    cited: list[int] = Field(
        max_length=100, description="The numbers of the passages the answer relies on."
    )
    declined: bool = Field(description="True when the passages do not answer the question.")
    reason: str = Field(
        max_length=MAX_REASON_CHARS,
        description="Why the question was declined (one sentence); empty when answered.",
    )


class AddressesOutput(BaseModel):
    """Whether a passage addresses a question, with a one-line reason."""

    model_config = ConfigDict(extra="forbid")

    addresses: bool = Field(description="True when the passage answers or directly addresses it.")
    reason: str = Field(max_length=MAX_REASON_CHARS, description="One sentence saying why.")


class ExpansionOutput(BaseModel):
    """Words the documentation may use for what a question asks (``scout.expansion`` bounds and
    cleans them; a longer list is cut there, not refused here, so a chatty model is no failure)."""

    model_config = ConfigDict(extra="forbid")

    terms: list[str] = Field(
        description=(
            "At most 12 words or short phrases (each at most 40 characters) that documentation "
            "may use for what the question asks: its technical names, commands, options."
        ),
    )
