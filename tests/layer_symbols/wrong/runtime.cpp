// The runtime object that defines what the code object calls.
int fixture_runtime_answer() { return 41; }
