# The two set-up commands of the README: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test install clean

$(BIN)/z0-memory: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

install: $(BIN)/z0-memory

demo: install
	$(BIN)/z0-memory demo

test: install
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build dist *.egg-info
