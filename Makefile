# tscoll: build and install with PGXS.
#   make && make install          build and install into the PostgreSQL of PG_CONFIG
#   make installcheck             pg_regress against a running server
# The full test suite (every layer) is scripts/test.sh; see README.md.

EXTENSION = tscoll
MODULE_big = tscoll
DATA = $(wildcard sql/tscoll--*.sql)

CORE_SRCS = $(wildcard src/core/*.cpp)
PG_SRCS = $(wildcard src/pg/*.cpp src/pg/*/*.cpp)
OBJS = $(CORE_SRCS:.cpp=.o) $(PG_SRCS:.cpp=.o)

# pg_regress tests: sql/<test>.sql, expected/<test>.out (tscoll--*.sql is
# the install script).
REGRESS = $(patsubst sql/%.sql,%,$(sort $(filter-out sql/tscoll--%,$(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --outputdir=build/regress

PG_CONFIG ?= pg_config
BSON_CFLAGS := $(shell pkg-config --cflags libbson-1.0)
BSON_LIBS := $(shell pkg-config --libs libbson-1.0)

PG_CPPFLAGS = -Isrc $(BSON_CFLAGS)
PG_CXXFLAGS = -std=c++17 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wno-register -fno-omit-frame-pointer
SHLIB_LINK = $(BSON_LIBS) -lstdc++

# No LLVM bitcode: the server's JIT gains nothing from these functions.
override with_llvm = no
# Rebuild what includes a header when the header changes (.deps/).
override autodepend = yes

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
