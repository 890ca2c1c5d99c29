"""Caller cases: will the client's model pick our tool and fill its arguments right?

A caller case (a test case with ``ask``) runs in two steps: (a) a caller model gets the request
with the tool list a client would offer (ours exactly as ``tools/list`` serves it, plus decoys:
``offer``) and we record what it calls (``ask``); its reply is judged (``steps``); (b) when it
called our tool with valid arguments, that call is served like any case (``runner``) and the
answer's expectations apply. ``rates`` sums the runs per caller model: picked right, wrong tool
(which), no call, arguments valid, arguments as expected, answer passed; and shows the pick rate
before and after an edit of a tool's description.
"""

from mcp_export.testing.callers.ask import DEFAULT_CALLER_PROMPT, CallerTurn, ask_caller
from mcp_export.testing.callers.offer import COMMON_SETS, DecoyError, OfferedTool
from mcp_export.testing.callers.rates import CallerRates, PickChange, caller_rates, rates_of
from mcp_export.testing.callers.runner import (
    CallerOptions,
    CallerResult,
    CallerSetup,
    prepare_callers,
    run_caller_case,
)
from mcp_export.testing.callers.steps import NONE, STEPS, PickCheck, Step

__all__ = [
    "COMMON_SETS",
    "DEFAULT_CALLER_PROMPT",
    "NONE",
    "STEPS",
    "CallerOptions",
    "CallerRates",
    "CallerResult",
    "CallerSetup",
    "CallerTurn",
    "DecoyError",
    "OfferedTool",
    "PickChange",
    "PickCheck",
    "Step",
    "ask_caller",
    "caller_rates",
    "prepare_callers",
    "rates_of",
    "run_caller_case",
]
