import torch


def reference(x):
    return x.sum(dim=1)
