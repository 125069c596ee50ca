# Old name of resnet50_8xb32_in1k.py, kept so that existing scripts work.
_base_ = 'resnet50_8xb32_in1k.py'

_deprecation_ = dict(
    expected='resnet50_8xb32_in1k.py',
    reference='https://example.org/cadence/config-renames#resnet50',
)
