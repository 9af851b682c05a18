"""Loading the rules layer into state at the start of a session."""

from __future__ import annotations

from langgraph.runtime import Runtime

from z0_memory.config import Context
from z0_memory.nodes.common import context_of, memory_of
from z0_memory.state import SessionState
from z0_memory.stores.rules import aload_rules
from z0_memory.validation import check_messages


async def load_rules(state: SessionState, runtime: Runtime[Context]) -> SessionState:
    """Read the rules files once per thread (a session); edit the files and start a new thread to change them.

    The files are read in a worker thread, never on the event loop. A rules problem (missing root, a file too large,
    not UTF-8) fails the run with a RulesError naming it. As the first node of both agent graphs it also refuses a
    turn whose text cannot be stored (a lone surrogate) with an InvalidInputError, before retrieval, the answer or
    extraction; the checkpointer refuses to store that input.
    """
    check_messages(state.get("messages") or [])
    if state.get("rules_sources") is not None:
        return {}
    context_of(runtime)  # a run without a project fails here, before anything is read
    settings = memory_of(runtime).settings  # the rules are the process's (Settings.rules_*), not a run's choice
    rules = await aload_rules(settings.rules_root, settings.rules_files, max_bytes=int(settings.rules_max_bytes))
    return {"rules": rules.text, "rules_sources": rules.sources}
