"""Event kernel and synchronisation primitives (see kernel.py)."""
from .kernel import NS_PER_MS, NS_PER_S, NS_PER_US, Event, Process, SimulationError, Simulator, all_of
from .sync import BoundedQueue, Condition, Mutex, RwLatch, Semaphore, SpinMutex

__all__ = ["NS_PER_MS", "NS_PER_S", "NS_PER_US", "Event", "Process", "SimulationError",
           "Simulator", "all_of", "BoundedQueue", "Condition", "Mutex", "RwLatch", "Semaphore",
           "SpinMutex"]
