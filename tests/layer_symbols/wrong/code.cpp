// A code object that calls a function only a runtime object defines: the reference the symbol
// check must refuse.
int fixture_runtime_answer();

int fixture_code_asks_the_runtime() { return fixture_runtime_answer() + 1; }
