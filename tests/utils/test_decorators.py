"""Prerequisite checks and deprecation decorators of cadence.utils."""

from __future__ import annotations

import warnings

import pytest

from cadence.utils import (
    ConflictingArgumentsError,
    check_prerequisites,
    deprecated_api_warning,
    deprecated_function,
    requires_executable,
    requires_package,
)


def test_requires_package_runs_when_present_and_names_the_missing(capsys):
    @requires_package("json")
    def ok():
        return "ran"

    @requires_package(["json", "no_such_pkg_cadence_x"])
    def missing():
        return "ran"

    assert ok() == "ran"
    with pytest.raises(
        RuntimeError, match='"no_such_pkg_cadence_x" are required in method "missing"'
    ):
        missing()
    assert capsys.readouterr().out == (  # printed too, as mmengine does
        'Prerequisites "no_such_pkg_cadence_x" are required in method "missing" but not found, '
        "please install them first.\n"
    )


def test_requires_executable_and_custom_checker():
    @requires_executable("sh")
    def shell():
        return 1

    @requires_executable("no-such-exe-cadence")
    def nope():
        return 1

    assert shell() == 1
    with pytest.raises(RuntimeError, match="no-such-exe-cadence"):
        nope()

    @check_prerequisites(["a", "b"], checker=lambda item: item == "a", msg_tmpl="{} for {}")
    def custom():
        return 1

    with pytest.raises(RuntimeError, match="^b for custom$"):
        custom()


def test_deprecated_api_warning_renames_keyword_arguments():
    @deprecated_api_warning({"old": "new"}, cls_name="Thing")
    def func(new=0, other=1):
        return new, other

    with pytest.warns(
        DeprecationWarning, match='"old" is deprecated in `Thing.func`, please use "new"'
    ):
        assert func(old=5) == (5, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert func(new=2) == (2, 1)
    with pytest.raises(ConflictingArgumentsError) as info:
        func(old=1, new=2)
    assert isinstance(info.value, TypeError) and isinstance(info.value, AssertionError)


def test_deprecated_function_warns_with_versions_and_documents_itself():
    @deprecated_function("0.2", "0.4", "use another()")
    def legacy():
        """Old helper."""
        return 7

    with pytest.warns(
        DeprecationWarning,
        match=r"legacy' is deprecated in version 0.2 and will be removed in version 0.4. "
        r"Please use another\(\)",
    ):
        assert legacy() == 7
    assert legacy.__doc__ == (  # mmengine's layout: the note first, then the docstring indented
        ".. deprecated:: 0.2\n    Deprecated and will be removed in version 0.4.\n"
        "    Please use another().\n\n\n    Old helper."
    )
