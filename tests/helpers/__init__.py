"""Helpers the test modules share: running the real ``scout``, config files, served estates.

Main rule: a test module imports helpers from here (or fakes from ``tests/fakes`` and the GitLab
test server from ``tests/gitlab_server``), never from another test module or from conftest, so a
test file can be read, moved or run alone; ``tests/test_test_layout.py`` checks it. Nothing here
is collected as a test.
"""
