#pragma once
#include "detail.h"
#define CONSUMER_API 1
