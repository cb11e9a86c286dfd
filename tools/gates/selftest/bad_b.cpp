// SPDX-License-Identifier: Apache-2.0
// The other half of the cross-translation-unit cycle in bad_a.cpp.
namespace burtorch {
namespace selftest {

int ping(int n);

int pong(int n) { return ping(n); }

}  // namespace selftest
}  // namespace burtorch
