# Packaging shortcuts. Development itself goes through dev.py (python3 dev.py app / test).

PYTHON ?= .venv/bin/python

.PHONY: dist dist-only build-env icons smoke clean-dist

# The bundle for this OS in dist/rigcheck/ (plus a .tar.gz on Linux), then its smoke test. Works on a
# fresh clone: dev.py creates .venv first (as 'python3 dev.py test' would), then PyInstaller is added.
dist: build-env
	$(PYTHON) packaging/build.py

# The bundle without the smoke test and the timings.
dist-only: build-env
	$(PYTHON) packaging/build.py --no-test --no-measure

build-env:
	python3 dev.py setup
	$(PYTHON) -m pip install --disable-pip-version-check -q -e ".[build,dev]"

# Re-render resources/icons/hicolor/*/apps/*.png from resources/icons/rigcheck.svg.
icons: build-env
	$(PYTHON) packaging/build.py icons

# The smoke test alone, on an existing bundle.
smoke:
	RIGCHECK_BUNDLE=dist/rigcheck $(PYTHON) -m pytest -m bundle -p no:cacheprovider -q packaging/smoke_test.py

clean-dist:
	rm -rf dist build/pyinstaller
