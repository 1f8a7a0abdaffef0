"""The CPU race and synchronization checker (``simtsafe.sim.check``): not built yet."""
