"""The `site` marker: tests that build the course website (scripts/build_site.py)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "site: builds the course website with Sphinx (about 30 s)")
