# kane: two commands on a fresh machine.
#   make run   - make a virtual environment, install kane, simulate the shopping cart, write out/cart.h5 and a plot
#   make test  - the whole test suite (under 10 minutes on 2 cores)
#   make docs  - the documentation site (Sphinx, warnings are errors) into out/docs, then a check of its internal
#                links (external ones are listed, not fetched)
#   make screenshots - PNGs of the cart run (its wheels' constraint forces as arrows) and of the UR5 (its COLLADA
#                      visual meshes, read with pycollada) in the browser viewer (Debian's chromium),
#                      out/cart_view_*.png, out/ur5_robot_view_*.png
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test docs bench install clean screenshots

$(STAMP): pyproject.toml
	@command -v cc >/dev/null || command -v gcc >/dev/null || (apt-get update -qq && apt-get install -y -qq gcc >/dev/null) || echo "no C compiler: kane falls back to numba/numpy"
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "could not install Debian's chromium: the browser tests will fail"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	mkdir -p out
	$(BIN)/kane simulate examples/shopping_cart.toml -o out/cart.h5
	$(BIN)/kane plot out/cart.h5 -o out/cart.png
	@echo "wrote out/cart.h5 and out/cart.png"

screenshots: run
	$(BIN)/python -m kane.viz.screenshots out/cart.h5 -o out
	$(BIN)/python -m kane.viz.screenshots --urdf ur5 -o out

test: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n 2

docs: $(STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs out/docs
	$(BIN)/python docs/_ext/check_links.py out/docs

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) out .pytest_cache
