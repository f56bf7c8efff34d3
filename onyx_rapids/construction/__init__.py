"""Building a :class:`~onyx_rapids.graph.Graph`: every step from a user's input to the finished
buffers that ``Graph.__init__`` takes.

* :mod:`~onyx_rapids.construction.sources`: one builder per kind of input (edge frame, Parquet,
  CSR, cuGraph, bipartite frame, NetworkX graph): it checks the arguments, reads the input through
  :mod:`onyx_rapids.io`, chooses where to build (whole on the device, or in chunks into host
  memory) and returns the buffers with the placement they go to;
* :mod:`~onyx_rapids.construction.device`: the device build, whole-array sorts of internal ids
  (also the reordered graph and the simple undirected view);
* :mod:`~onyx_rapids.construction.host`: the host build, chunks and blocks into pinned host
  memory for graphs larger than the device;
* :mod:`~onyx_rapids.construction.duplicates`: the weights that rows naming one edge merge
  into (``duplicates=``), and the warning or error when they disagree;
* :mod:`~onyx_rapids.construction.layout`: the layout both builds produce (index and offset
  dtypes, :class:`~onyx_rapids.construction.layout.Buffers`), the placement policy, shared array
  helpers.

Renumbering original ids to internal indices lives in :mod:`onyx_rapids.ids`, the error
messages the builds share with the readers in :mod:`onyx_rapids.messages`.  Nothing here
imports :mod:`onyx_rapids.graph`: the graph imports its builders.
"""
