"""A synthetic, offline stand-in for the ``datasets`` module of JAX's example scripts.

JAX's examples (``mnist_classifier.py``, ``mnist_vae.py``, ...) do ``from examples import
datasets`` and call ``datasets.mnist()``, which downloads MNIST. Here nothing is downloaded:
``run_examples.py`` puts this file beside a copy of each script as ``examples/datasets.py``.
The functions keep the names, signatures, shapes and dtypes of the real ones, but the data is
small and made up (so a script's fixed number of epochs takes seconds) and deterministic (so
real JAX and numjax see the same arrays).

Each of the 10 classes is a fixed random 28x28 template; an image is its class's template plus
noise, so the classes can be learned and accuracies move during training. The set sizes come
from the environment: ``SYNTHETIC_MNIST_TRAIN`` (default 256) and ``SYNTHETIC_MNIST_TEST``
(default 128).
"""
import os

import numpy as np

NUM_CLASSES = 10
IMAGE_SHAPE = (28, 28)


def _sizes():
    return (int(os.environ.get("SYNTHETIC_MNIST_TRAIN", 256)),
            int(os.environ.get("SYNTHETIC_MNIST_TEST", 128)))


def _partial_flatten(x):
    """Flatten all but the first dimension of an array."""
    return np.reshape(x, (x.shape[0], -1))


def _one_hot(x, k, dtype=np.float32):
    """One-hot encode the integer labels ``x`` over ``k`` classes."""
    return np.array(x[:, None] == np.arange(k), dtype)


def _images_and_labels(rng, templates, count):
    labels = rng.randint(0, NUM_CLASSES, count).astype(np.uint8)
    noise = rng.normal(0.0, 60.0, (count,) + IMAGE_SHAPE)
    images = np.clip(templates[labels] + noise, 0, 255).astype(np.uint8)
    return images, labels


def mnist_raw():
    """(train_images, train_labels, test_images, test_labels): uint8 images of shape
    (N, 28, 28) with values 0..255 and uint8 labels 0..9, as the real MNIST files parse."""
    rng = np.random.RandomState(1234)
    # Sparse bright strokes on a dark background, loosely like handwritten digits.
    templates = np.where(rng.rand(NUM_CLASSES, *IMAGE_SHAPE) < 0.2, 230.0, 10.0)
    num_train, num_test = _sizes()
    train_images, train_labels = _images_and_labels(rng, templates, num_train)
    test_images, test_labels = _images_and_labels(rng, templates, num_test)
    return train_images, train_labels, test_images, test_labels


def mnist(permute_train=False):
    """Images flattened to (N, 784) float32 in [0, 1] and labels one-hot (N, 10) float32;
    ``permute_train`` shuffles the training set with a fixed seed."""
    train_images, train_labels, test_images, test_labels = mnist_raw()
    train_images = _partial_flatten(train_images) / np.float32(255.)
    test_images = _partial_flatten(test_images) / np.float32(255.)
    train_labels = _one_hot(train_labels, NUM_CLASSES)
    test_labels = _one_hot(test_labels, NUM_CLASSES)
    if permute_train:
        perm = np.random.RandomState(0).permutation(train_images.shape[0])
        train_images, train_labels = train_images[perm], train_labels[perm]
    return train_images, train_labels, test_images, test_labels
