// SPDX-License-Identifier: Apache-2.0
// Deliberately breaks every rule the gates enforce, so that
// `tools/gates/gates.py selftest` can show each gate fails when it should.
// Never part of the library: only the self-test compiles it.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <new>

extern "C" int __cxa_guard_acquire(long long* guard);  // what a guarded static calls
extern const char typeinfo_of_int __asm__("_ZTIi");  // what typeid(int) references

namespace burtorch {
namespace selftest {

int counter = 0;  // mutable global state (.bss)
int seeded = 42;  // mutable global state (.data)

struct Shape {
  virtual ~Shape() = default;  // vtable
  virtual int sides() const { return 0; }
};
struct Square : Shape {
  int sides() const override { return 4; }
};

int pong(int n);

int ping(int n) {
#ifndef __OPTIMIZE__
  return (n <= 0) ? 0 : pong(n - 1);  // recursion through another translation unit
#else
  return n;
#endif
}

void* heap(std::size_t n) { return std::malloc(n); }
void unheap(void* p) { std::free(p); }
int* boxed(int v) { return new int(v); }
void unboxed(int* p) { delete p; }
Shape* shape() { return new Square(); }

void say(const char* text) { std::printf("%s\n", text); }
long now() { return static_cast<long>(std::time(nullptr)); }
void die() { std::abort(); }
int guarded(long long* g) { return __cxa_guard_acquire(g); }
const void* type_of_int() { return &typeinfo_of_int; }

int call(int (*f)(int), int x) { return f(x); }  // indirect call with no deviation ID

int dynamic_frame(unsigned n) {
  volatile char* p = static_cast<volatile char*>(__builtin_alloca(n));
  p[0] = 1;
  return p[0];
}

int big_frame(int i) {
  volatile char buffer[8192];
  buffer[i] = 1;
  return buffer[(i + 1) % 8192];
}

}  // namespace selftest
}  // namespace burtorch
