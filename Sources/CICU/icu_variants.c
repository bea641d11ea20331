#include "icu_variants.h"
#include <unicode/utrans.h>
#include <unicode/uspoof.h>

void *icuv_open_simplifier(void) {
    static const UChar id[] = u"Traditional-Simplified";
    UErrorCode status = U_ZERO_ERROR;
    UTransliterator *t = utrans_openU(id, -1, UTRANS_FORWARD, NULL, 0, NULL, &status);
    return U_FAILURE(status) ? NULL : t;
}

void icuv_close_simplifier(void *simplifier) { utrans_close((UTransliterator *)simplifier); }

int32_t icuv_simplify(void *simplifier, uint16_t *text, int32_t *length, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t limit = *length;
    utrans_transUChars((const UTransliterator *)simplifier, (UChar *)text, length, capacity, 0, &limit, &status);
    return U_FAILURE(status) ? -1 : 0;
}

void *icuv_open_checker(void) {
    UErrorCode status = U_ZERO_ERROR;
    USpoofChecker *checker = uspoof_open(&status);
    return U_FAILURE(status) ? NULL : checker;
}

void icuv_close_checker(void *checker) { uspoof_close((USpoofChecker *)checker); }

int32_t icuv_skeleton(void *checker, const uint16_t *text, int32_t length, uint16_t *out, int32_t capacity) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t written = uspoof_getSkeleton((const USpoofChecker *)checker, 0, (const UChar *)text, length, (UChar *)out, capacity, &status);
    return U_FAILURE(status) ? -1 : written;
}
