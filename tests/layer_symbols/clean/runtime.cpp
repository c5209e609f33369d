// A runtime object that calls the code object's function and instantiates a template.
int fixture_code_answer();

template <class T>
T fixture_twice(T value) {
    return value * 2;
}
template int fixture_twice<int>(int);

int fixture_runtime_asks_the_code() { return fixture_code_answer() + 1; }
