// The sweep: after a run, once the workers have exited and the nemesis is
// done, every key on every master of the lock server, with its type, its
// expiry and what it holds (sweep.log), for the checker to judge
// (server_state.cpp): keys that should carry a lease and have none, permits
// that do not add up, holds that no worker believes it has.
#pragma once

#include <string>

#include "deployment.hpp"

namespace holdfast::check {

/// Reads every key of every data node that says it is master into `path`.
/// A node that does not answer within a second is left out. `group`: the
/// locks are group locks, whose hashes are read as their holders
/// (group_layout.hpp), not their fields.
void sweep(Deployment& deployment, bool group, const std::string& path);

}  // namespace holdfast::check
