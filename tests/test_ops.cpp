#include "harness.hpp"
namespace { void todo(bt_test::Context& t){ BT_CHECK(t, false);} const bt_test::TestCase kCases[] = {{"todo", todo}}; }
BT_TEST_MAIN("x", kCases)
