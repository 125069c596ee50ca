"""Text substitutions: ``{{_base_.x}}``, predefined variables, ``{{$ENV:default}}``."""

from __future__ import annotations

import pytest

from cadence.config import Config, ConfigError

BASE = """
    model = dict(type='M', backbone=dict(depth=50, stages=[1, 2]))
    pipeline = [dict(type='Load'), dict(type='Resize', size=(3, 4))]
    lr = 0.5
    epochs = 12
    name = 'r50'
    flag = True
    """


def load(write_files, child, name="child.py", **kwargs):
    root = write_files({"base.py": BASE, name: child})
    return Config.fromfile(root / name, **kwargs)


# ------------------------------------------------------------ {{_base_.x}}
def test_base_reference_scalars_in_code_position(write_files):
    cfg = load(
        write_files,
        """
        _base_ = './base.py'
        a = {{_base_.lr}}
        b = {{_base_.epochs}}
        c = {{_base_.name}}
        d = {{_base_.flag}}
        e = {{_base_.model.backbone.depth}}
        f = dict(x={{ _base_.lr }}, y=[{{_base_.epochs}}, 1])
        """,
    )
    assert cfg.a == 0.5
    assert cfg.b == 12
    assert cfg.c == "r50"
    assert cfg.d is True
    assert cfg.e == 50
    assert cfg.f.to_dict() == {"x": 0.5, "y": [12, 1]}


def test_base_reference_dicts_and_lists(write_files):
    cfg = load(
        write_files,
        """
        _base_ = './base.py'
        teacher = {{_base_.model}}
        student = dict(backbone={{_base_.model.backbone}})
        test_pipeline = {{_base_.pipeline}}
        second = {{_base_.pipeline.1}}
        """,
    )
    assert cfg.teacher.to_dict() == {"type": "M", "backbone": {"depth": 50, "stages": [1, 2]}}
    assert cfg.student.to_dict() == {"backbone": {"depth": 50, "stages": [1, 2]}}
    assert cfg.to_dict()["test_pipeline"] == [
        {"type": "Load"},
        {"type": "Resize", "size": (3, 4)},
    ]
    assert cfg.second.to_dict() == {"type": "Resize", "size": (3, 4)}
    assert cfg.teacher.backbone.depth == 50  # a ConfigDict, attribute access works


def test_base_reference_values_are_deep_copies(write_files):
    cfg = load(
        write_files,
        """
        _base_ = './base.py'
        a = {{_base_.model}}
        b = {{_base_.model}}
        c = {{_base_.pipeline}}
        """,
    )
    cfg.a.backbone.depth = 1
    cfg.a.backbone.stages.append(3)
    cfg.c[0].type = "Changed"
    assert cfg.b.backbone.depth == 50
    assert cfg.b.backbone.stages == [1, 2]
    assert cfg.model.backbone.depth == 50
    assert cfg.model.backbone.stages == [1, 2]
    assert cfg.pipeline[0].type == "Load"
    assert cfg.a.backbone is not cfg.b.backbone


@pytest.mark.parametrize(
    "line, expected",
    [
        ("s = '{{_base_.name}}'", "r50"),
        ('s = "{{_base_.name}}"', "r50"),
        ("s = 'work_dirs/{{_base_.name}}_{{_base_.epochs}}e'", "work_dirs/r50_12e"),
        ('s = "lr={{_base_.lr}}!"', "lr=0.5!"),
        ("s = 'stages {{_base_.model.backbone.stages}}'", "stages [1, 2]"),
        ("s = 'say \"{{_base_.name}}\" now'", 'say "r50" now'),
        ('s = "it\'s {{_base_.name}}"', "it's r50"),
    ],
    ids=["single", "double", "two-refs", "double-mixed", "list", "inner-quotes", "apostrophe"],
)
def test_base_reference_spliced_inside_strings(write_files, line, expected):
    cfg = load(write_files, f"_base_ = './base.py'\n{line}\n")
    assert cfg.s == expected


def test_base_reference_in_json_and_yaml(write_files):
    root = write_files(
        {
            "base.py": BASE,
            "child.json": '{"_base_": "./base.py", "a": {{_base_.model.backbone}},'
            ' "b": {{_base_.lr}}}',
            "child.yaml": "_base_: ./base.py\na: {{_base_.pipeline}}\nb: {{_base_.epochs}}\n",
        }
    )
    j = Config.fromfile(root / "child.json")
    assert j.a.to_dict() == {"depth": 50, "stages": [1, 2]}
    assert j.b == 0.5
    y = Config.fromfile(root / "child.yaml")
    assert y.to_dict()["a"] == [{"type": "Load"}, {"type": "Resize", "size": (3, 4)}]
    assert y.b == 12


# ------------------------------------------------------------ predefined
def test_predefined_variables(write_files):
    root = write_files(
        {
            "sub/my_cfg.py": """
                dirname = '{{fileDirname}}'
                basename = '{{fileBasename}}'
                stem = '{{fileBasenameNoExtension}}'
                ext = '{{fileExtname}}'
                work_dir = './work_dirs/{{ fileBasenameNoExtension }}'
                """,
            "sub/my_cfg.yaml": "stem: '{{fileBasenameNoExtension}}'\next: '{{fileExtname}}'\n",
        }
    )
    cfg = Config.fromfile(root / "sub" / "my_cfg.py")
    assert cfg.dirname == str(root / "sub")
    assert cfg.basename == "my_cfg.py"
    assert cfg.stem == "my_cfg"
    assert cfg.ext == ".py"
    assert cfg.work_dir == "./work_dirs/my_cfg"
    y = Config.fromfile(root / "sub" / "my_cfg.yaml")
    assert y.to_dict() == {"stem": "my_cfg", "ext": ".yaml"}


def test_predefined_variables_are_per_file(write_files):
    root = write_files(
        {
            "base_dir/base_file.py": "base_name = '{{fileBasenameNoExtension}}'\n",
            "child_file.py": "_base_ = './base_dir/base_file.py'\n"
            "child_name = '{{fileBasenameNoExtension}}'\n",
        }
    )
    assert Config.fromfile(root / "child_file.py").to_dict() == {
        "base_name": "base_file",
        "child_name": "child_file",
    }


def test_predefined_variables_can_be_disabled(write_files):
    root = write_files({"cfg.py": "stem = '{{fileBasenameNoExtension}}'\n"})
    cfg = Config.fromfile(root / "cfg.py", use_predefined_variables=False)
    assert cfg.stem == "{{fileBasenameNoExtension}}"


# ---------------------------------------------------------- environment
ENV_CFG = """
    a = '{{$CADENCE_T_A:fallback}}'
    b = '{{$CADENCE_T_B:}}'
    c = {{$CADENCE_T_C:7}}
    d = 'x-{{$CADENCE_T_D:dflt}}-y'
    """


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("A", "B", "C", "D", "E", "MISSING"):
        monkeypatch.delenv(f"CADENCE_T_{name}", raising=False)
    return monkeypatch


def test_env_variables_unset_use_defaults(write_files, clean_env):
    root = write_files({"cfg.py": ENV_CFG})
    cfg = Config.fromfile(root / "cfg.py")
    assert cfg.to_dict() == {"a": "fallback", "b": "", "c": 7, "d": "x-dflt-y"}
    assert cfg.env_variables == {}


def test_env_variables_set(write_files, clean_env):
    clean_env.setenv("CADENCE_T_A", "from_env")
    clean_env.setenv("CADENCE_T_B", "bee")
    clean_env.setenv("CADENCE_T_C", "42")
    root = write_files({"cfg.py": ENV_CFG})
    cfg = Config.fromfile(root / "cfg.py")
    assert cfg.to_dict() == {"a": "from_env", "b": "bee", "c": 42, "d": "x-dflt-y"}
    assert isinstance(cfg.c, int)
    assert cfg.env_variables == {
        "CADENCE_T_A": "from_env",
        "CADENCE_T_B": "bee",
        "CADENCE_T_C": "42",
    }


def test_env_variable_without_default_must_be_set(write_files, clean_env):
    root = write_files({"cfg.py": "a = 1\nb = 2\nc = '{{$CADENCE_T_MISSING}}'\n"})
    with pytest.raises(ConfigError) as info:
        Config.fromfile(root / "cfg.py")
    message = str(info.value)
    assert "CADENCE_T_MISSING" in message
    assert f"{root / 'cfg.py'}:3" in message
    clean_env.setenv("CADENCE_T_MISSING", "now set")
    assert Config.fromfile(root / "cfg.py").c == "now set"


def test_env_variables_of_bases_are_recorded(write_files, clean_env):
    clean_env.setenv("CADENCE_T_A", "1")
    clean_env.setenv("CADENCE_T_E", "e")
    root = write_files(
        {
            "base.py": "base_val = {{$CADENCE_T_A:0}}\n",
            "base.yaml": "yaml_val: '{{$CADENCE_T_E}}'\n",
            "child.py": "_base_ = ['./base.py', './base.yaml']\nchild_val = '{{$CADENCE_T_D:d}}'\n",
        }
    )
    cfg = Config.fromfile(root / "child.py")
    assert cfg.to_dict() == {"base_val": 1, "yaml_val": "e", "child_val": "d"}
    assert cfg.env_variables == {"CADENCE_T_A": "1", "CADENCE_T_E": "e"}


def test_env_variables_can_be_disabled(write_files, clean_env):
    clean_env.setenv("CADENCE_T_A", "from_env")
    root = write_files({"cfg.py": "a = '{{$CADENCE_T_A:fallback}}'\n"})
    cfg = Config.fromfile(root / "cfg.py", use_environment_variables=False)
    assert cfg.a == "{{$CADENCE_T_A:fallback}}"
    assert cfg.env_variables == {}
