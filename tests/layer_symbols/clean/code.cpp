// A code object that defines a function the runtime calls (a reference down, allowed), and calls
// a template instantiated only in the runtime object, which is a weak definition there and no
// layer's own (allowed too).
template <class T>
T fixture_twice(T value);

int fixture_code_answer() { return 41; }

int fixture_code_asks_a_template() { return fixture_twice(21); }
