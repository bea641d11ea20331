#include <curl/curl.h>

// curl_easy_setopt / curl_multi_setopt / curl_easy_getinfo are variadic, which Swift cannot call.
// These typed forwarders are the whole of the C surface the Pusher uses for them.
static inline CURLcode curlx_easy_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode curlx_easy_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode curlx_easy_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode curlx_easy_write_cb(CURL *h, curl_write_callback cb) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb); }
static inline CURLcode curlx_easy_header_cb(CURL *h, curl_write_callback cb) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb); }
static inline CURLMcode curlx_multi_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline long curlx_response_code(CURL *h) { long c = 0; curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c); return c; }
static inline void *curlx_private(CURL *h) { void *p = 0; curl_easy_getinfo(h, CURLINFO_PRIVATE, &p); return p; }
