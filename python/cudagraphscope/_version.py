# graphscope's release: the project(VERSION) of CMakeLists.txt, which the
# wheel's build checks this against (packaging/python/graphscope_wheel.py).
__version__ = "0.1.0"
