"""Every test starts lazy, with gradients on and the default seed, whatever the test before it did."""
import pytest

import xlite as xl


@pytest.fixture(autouse=True)
def fresh_modes():
    xl.sync()
    with xl.eager_mode(False), xl.set_grad_enabled(True):
        xl.manual_seed(0)
        yield
    xl.sync()
