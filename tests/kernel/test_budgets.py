"""RequestBudget / CallBudget: LLM-call accounting shared by the engine and the LLM bridge, and the
deadline arithmetic the supervisor's per-call timeouts come from (a fake clock, no sleeping)."""

from __future__ import annotations

from mrpvm.kernel.budgets import CallBudget, RequestBudget


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_charge_and_refund_never_go_below_zero_or_count_negative_calls():
    budget = CallBudget(3)
    budget.charge(2)
    budget.charge(-5)  # a plugin reporting nonsense does not give calls back
    assert (budget.llm_calls_used, budget.llm_calls_left) == (2, 1)
    budget.refund(1)
    assert budget.llm_calls_left == 2
    budget.refund(10)
    assert (budget.llm_calls_used, budget.llm_calls_left) == (0, 3)
    budget.charge(7)
    assert budget.llm_calls_left == 0


def test_request_budget_is_a_call_budget_with_a_deadline():
    clock = FakeClock()
    budget = RequestBudget(2, timeout_ms=1500, max_depth=3, clock=clock)
    assert isinstance(budget, CallBudget) and budget.affords(2) and not budget.affords(3)
    budget.charge(1)
    assert not budget.affords(2) and budget.snapshot()["llmCallsUsed"] == 1
    clock.now += 1.0
    assert budget.time_left_ms() == 500 and not budget.expired()
    assert budget.call_timeout_s(200) == 0.2  # the plugin's own limit is the tighter one
    assert abs(budget.call_timeout_s(10_000) - 0.5) < 1e-9  # else what the request has left
    clock.now += 0.6
    assert budget.expired() and budget.time_left_s() == 0.0
    assert budget.allows_depth(3) and not budget.allows_depth(4)
