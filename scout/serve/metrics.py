"""The server's Prometheus metrics, in a registry of its own (never the process-global one).

Questions by outcome, refusals and failures by error code, answer latency, provider tokens,
retrieval's model stages that failed (the question then searched with what was left), and
connections closed for being slow or past the cap. An app built twice in one process (tests) gets
two registries, so no name is registered twice.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from scout.providers.base import Usage

# Seconds: an offline answer takes milliseconds, a model one to tens of seconds.
LATENCY_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    """What ``GET /metrics`` shows."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.questions = Counter(
            "scout_questions",
            "Questions answered or declined, by outcome",
            ["outcome"],
            registry=self.registry,
        )
        self.errors = Counter(
            "scout_errors",
            "Requests refused or failed, by error code",
            ["code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "scout_answer_seconds",
            "Time to answer or decline one question",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.tokens = Counter(
            "scout_provider_tokens",
            "Tokens the provider reported, by direction",
            ["direction"],
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "scout_answers_in_flight", "Answers being composed now", registry=self.registry
        )
        self.retrieval_fallbacks = Counter(
            "scout_retrieval_fallbacks",
            "Questions a model stage of retrieval failed for, searched without it: stage "
            "expansion (the model's search terms) or dense (the question's vector), by code",
            ["stage", "code"],
            registry=self.registry,
        )
        self.connections_closed = Counter(
            "scout_connections_closed",
            "Connections closed by the server: slow (no whole request within header_timeout), "
            "evicted (the oldest waiting one, at the connection cap) or refused (at the cap)",
            ["reason"],
            registry=self.registry,
        )

    def answered(self, outcome: str, seconds: float) -> None:
        self.questions.labels(outcome=outcome).inc()
        self.latency.observe(seconds)

    def failed(self, code: str) -> None:
        self.errors.labels(code=code).inc()

    def fell_back(self, expansion_error: str | None, dense_error: str | None) -> None:
        """Count what a question's retrieval went without (nothing, usually)."""
        if expansion_error is not None:
            self.retrieval_fallbacks.labels(stage="expansion", code=expansion_error).inc()
        if dense_error is not None:
            self.retrieval_fallbacks.labels(stage="dense", code=dense_error).inc()

    def closed(self, reason: str) -> None:
        self.connections_closed.labels(reason=reason).inc()

    def used(self, usage: Usage) -> None:
        self.tokens.labels(direction="input").inc(usage.input_tokens)
        self.tokens.labels(direction="output").inc(usage.output_tokens)

    def text(self) -> bytes:
        return generate_latest(self.registry)
