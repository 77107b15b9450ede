"""Digital twins: run compiled outputs in real (simulated) network software."""
