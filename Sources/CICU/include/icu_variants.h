#include <stdint.h>

// ICU's variant data behind plain C types: the filter's Swift code imports this header only, never ICU's
// own (Foundation carries a different ICU whose headers would clash with Debian's in one Swift module).

/// ICU's Traditional-Simplified transform; NULL if ICU lacks it. Close with icuv_close_simplifier.
void *icuv_open_simplifier(void);
void icuv_close_simplifier(void *simplifier);
/// Transforms UTF-16 `text` (length `*length`, room for `capacity`) in place; 0 on success.
int32_t icuv_simplify(void *simplifier, uint16_t *text, int32_t *length, int32_t capacity);

/// A UTS #39 spoof checker; NULL if ICU cannot make one. Close with icuv_close_checker.
void *icuv_open_checker(void);
void icuv_close_checker(void *checker);
/// Writes the confusable skeleton of UTF-16 `text` to `out`; its length, or -1 on error.
int32_t icuv_skeleton(void *checker, const uint16_t *text, int32_t length, uint16_t *out, int32_t capacity);
