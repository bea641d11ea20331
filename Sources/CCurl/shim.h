#include <curl/curl.h>

// curl_easy_setopt / curl_multi_setopt / curl_easy_getinfo are variadic, which Swift cannot call.
// These typed forwarders are the whole of the C surface the Pusher uses for them.
static inline CURLcode curlx_easy_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode curlx_easy_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode curlx_easy_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode curlx_easy_write_cb(CURL *h, curl_write_callback cb) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb); }
static inline CURLcode curlx_easy_header_cb(CURL *h, curl_write_callback cb) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, cb); }
static inline CURLMcode curlx_multi_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline long curlx_info_long(CURL *h, CURLINFO i) { long v = 0; curl_easy_getinfo(h, i, &v); return v; }
static inline long curlx_response_code(CURL *h) { long c = 0; curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c); return c; }
static inline void *curlx_private(CURL *h) { void *p = 0; curl_easy_getinfo(h, CURLINFO_PRIVATE, &p); return p; }
static inline curl_off_t curlx_info_off(CURL *h, CURLINFO i) { curl_off_t v = 0; curl_easy_getinfo(h, i, &v); return v; }
static inline CURLcode curlx_easy_opensocket_cb(CURL *h, curl_opensocket_callback cb) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, cb); }
static inline CURLcode curlx_easy_closesocket_cb(CURL *h, curl_closesocket_callback cb) { return curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, cb); }
static inline CURLcode curlx_easy_prereq_cb(CURL *h, curl_prereq_callback cb) { return curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, cb); }
static inline CURLcode curlx_easy_read_cb(CURL *h, curl_read_callback cb) { return curl_easy_setopt(h, CURLOPT_READFUNCTION, cb); }
static inline CURLcode curlx_easy_seek_cb(CURL *h, curl_seek_callback cb) { return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, cb); }
static inline CURLcode curlx_easy_xferinfo_cb(CURL *h, curl_xferinfo_callback cb) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb); }

// The socket_action driver: libcurl reports the sockets and the timeout it wants watched, the transport
// watches them with epoll. epoll's event struct is packed on x86-64 (Swift imports it poorly), so these
// forwarders take and give plain integers.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
static inline CURLMcode curlx_multi_ptr(CURLM *m, CURLMoption o, void *v) { return curl_multi_setopt(m, o, v); }
static inline CURLMcode curlx_multi_socket_cb(CURLM *m, curl_socket_callback cb) { return curl_multi_setopt(m, CURLMOPT_SOCKETFUNCTION, cb); }
static inline CURLMcode curlx_multi_timer_cb(CURLM *m, curl_multi_timer_callback cb) { return curl_multi_setopt(m, CURLMOPT_TIMERFUNCTION, cb); }
static inline int curlx_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
/// Watches `fd` for what libcurl asks (CURL_POLL_IN/OUT/INOUT), or stops (CURL_POLL_REMOVE).
static inline int curlx_epoll_set(int ep, int fd, int what, int registered) {
    struct epoll_event event = {0};
    event.data.fd = fd;
    if (what == CURL_POLL_REMOVE) return registered ? epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL) : 0;
    if (what & CURL_POLL_IN) event.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) event.events |= EPOLLOUT;
    return epoll_ctl(ep, registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event);
}
/// Waits up to `timeout_ms`; fills `fds` and `flags` (CURL_CSELECT_IN/OUT/ERR) for at most 64 ready sockets.
static inline int curlx_epoll_wait(int ep, int *fds, int *flags, int timeout_ms) {
    struct epoll_event events[64];
    int count = epoll_wait(ep, events, 64, timeout_ms);
    for (int i = 0; i < count; i++) {
        int f = 0;
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) f |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT) f |= CURL_CSELECT_OUT;
        if (events[i].events & EPOLLERR) f |= CURL_CSELECT_ERR;
        fds[i] = events[i].data.fd;
        flags[i] = f;
    }
    return count;
}
static inline int curlx_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
static inline void curlx_eventfd_signal(int fd) { uint64_t one = 1; ssize_t r = write(fd, &one, sizeof one); (void)r; }
static inline void curlx_eventfd_drain(int fd) { uint64_t value; ssize_t r = read(fd, &value, sizeof value); (void)r; }
