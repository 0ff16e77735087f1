/**
 * @file
 * UCX's profiling macros with profiling disabled: each macro expands to the
 * code it wraps and nothing else, so a wrapped call returns the same value
 * and has the same effects as the bare call, evaluated exactly once.
 * Arguments that only describe an event (names, request pointers, 32-bit
 * parameters) are not evaluated. openuct has no built-in profiler, so
 * ucs/profile/profile_on.h gives the same definitions. Included by
 * applications written for UCX.
 */
#ifndef UCS_PROFILE_PROFILE_OFF_H_
#define UCS_PROFILE_PROFILE_OFF_H_

#include <ucs/profile/profile_defs.h>

/**
 * Record an event of a given kind; does nothing.
 *
 * @param ...  Event kind, name and parameters; not evaluated.
 */
#define UCS_PROFILE(...) UCS_EMPTY_STATEMENT

/**
 * Record a point in time; does nothing.
 *
 * @param _name  Event name; not evaluated.
 */
#define UCS_PROFILE_SAMPLE(_name) UCS_EMPTY_STATEMENT

/** Start a profiled scope; does nothing. */
#define UCS_PROFILE_SCOPE_BEGIN() UCS_EMPTY_STATEMENT

/**
 * End the scope started by UCS_PROFILE_SCOPE_BEGIN(); does nothing.
 *
 * @param _name  Scope name; not evaluated.
 */
#define UCS_PROFILE_SCOPE_END(_name) UCS_EMPTY_STATEMENT

/**
 * Profile the statement or block that follows:
 * `UCS_PROFILE_CODE("name") { ... }`. Expands to nothing, leaving the
 * block as plain code that runs once.
 *
 * @param _name  Scope name; not evaluated.
 */
#define UCS_PROFILE_CODE(_name)

/**
 * Define a profiled function returning a value:
 * `UCS_PROFILE_FUNC(int, add, (a, b), int a, int b) { return a + b; }`
 * defines the plain function `int add(int a, int b)`. It may be preceded
 * by `static` or other specifiers.
 *
 * @param _ret_type  Return type.
 * @param _name      Function name.
 * @param _arglist   Parenthesized parameter names; unused here.
 * @param ...        Parameter declarations.
 */
#define UCS_PROFILE_FUNC(_ret_type, _name, _arglist, ...) \
    _ret_type _name(__VA_ARGS__)

/**
 * Define a profiled function returning nothing; see UCS_PROFILE_FUNC().
 *
 * @param _name     Function name.
 * @param _arglist  Parenthesized parameter names; unused here.
 * @param ...       Parameter declarations.
 */
#define UCS_PROFILE_FUNC_VOID(_name, _arglist, ...) void _name(__VA_ARGS__)

/**
 * Call a function as a profiled scope with a given name; the value of the
 * expression is the function's return value.
 *
 * @param _name  Scope name; not evaluated.
 * @param _func  Function to call.
 * @param ...    Its arguments.
 */
#define UCS_PROFILE_NAMED_CALL(_name, _func, ...) _func(__VA_ARGS__)

/**
 * Call a function as a profiled scope named after it; the value of the
 * expression is the function's return value.
 *
 * @param _func  Function to call.
 * @param ...    Its arguments.
 */
#define UCS_PROFILE_CALL(_func, ...) _func(__VA_ARGS__)

/**
 * Call a function returning void as a named profiled scope.
 *
 * @param _name  Scope name; not evaluated.
 * @param _func  Function to call.
 * @param ...    Its arguments.
 */
#define UCS_PROFILE_NAMED_CALL_VOID(_name, _func, ...) _func(__VA_ARGS__)

/**
 * Call a function returning void as a profiled scope named after it.
 *
 * @param _func  Function to call.
 * @param ...    Its arguments.
 */
#define UCS_PROFILE_CALL_VOID(_func, ...) _func(__VA_ARGS__)

/**
 * Record the start of an asynchronous request; does nothing.
 *
 * @param ...  Request pointer, name and 32-bit parameter; not evaluated.
 */
#define UCS_PROFILE_REQUEST_NEW(...) UCS_EMPTY_STATEMENT

/**
 * Record progress of an asynchronous request; does nothing.
 *
 * @param ...  Request pointer, name and 32-bit parameter; not evaluated.
 */
#define UCS_PROFILE_REQUEST_EVENT(...) UCS_EMPTY_STATEMENT

/**
 * Record progress of an asynchronous request when a status is not an
 * error; does nothing.
 *
 * @param ...  Request pointer, name, 32-bit parameter and status; not
 *             evaluated.
 */
#define UCS_PROFILE_REQUEST_EVENT_CHECK_STATUS(...) UCS_EMPTY_STATEMENT

/**
 * Record the end of an asynchronous request; does nothing.
 *
 * @param ...  Request pointer; not evaluated.
 */
#define UCS_PROFILE_REQUEST_FREE(...) UCS_EMPTY_STATEMENT

#endif
