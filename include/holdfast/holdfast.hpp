// Everything holdfast offers, in one include.
#pragma once

#include "holdfast/client.hpp"
#include "holdfast/config.hpp"
#include "holdfast/count_down_latch.hpp"
#include "holdfast/errors.hpp"
#include "holdfast/fair_lock.hpp"
#include "holdfast/fenced_lock.hpp"
#include "holdfast/inspect.hpp"
#include "holdfast/lock.hpp"
#include "holdfast/lock_group.hpp"
#include "holdfast/multi_lock.hpp"
#include "holdfast/permit_expirable_semaphore.hpp"
#include "holdfast/read_write_lock.hpp"
#include "holdfast/red_lock.hpp"
#include "holdfast/semaphore.hpp"
#include "holdfast/simple_lock.hpp"
#include "holdfast/spin_lock.hpp"
