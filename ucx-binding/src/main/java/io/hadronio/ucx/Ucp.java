package io.hadronio.ucx;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * Downcalls into libucp, one {@code MH$} handle per C function, each called with
 * {@code invokeExact} from a static method of the same name.
 *
 * <p>Pointers (handles, buffers, parameter structs) are passed as {@code long}
 * addresses: on the 64-bit ABIs FFM supports, a pointer and a 64-bit integer are
 * passed alike, and a {@code long} costs no {@code MemorySegment} per call, which
 * keeps the data path allocation-free. Status pointers ({@code ucs_status_ptr_t})
 * come back as {@code long} too; see {@link UcsStatus#isErrorPointer}. Every handle has one
 * of the shared downcall descriptors of {@link WordCalls} (four or eight words: a call passes
 * {@code 0L} for the arguments its function does not have): a {@code ucs_status_t} (one byte) comes
 * back in a 64-bit word whose low byte the wrapper keeps ({@code (byte) (long)}), and an
 * {@code int} argument goes out widened.
 *
 * <p>Calls that can run completion or receive callbacks (progress, the {@code *_nbx}
 * operations, close) are never {@code critical}: an upcall from a critical downcall
 * kills the JVM. Only pure queries are critical.
 */
final class Ucp {
    private Ucp() {
    }

    private static final Linker.Option CRITICAL = Linker.Option.critical(false);

    private static MethodHandle h(String name, FunctionDescriptor fd, Linker.Option... options) {
        return NativeLibraries.downcall(name, fd, options);
    }

    // ---- configuration and context --------------------------------------------------------

    /** {@snippet lang=c : ucs_status_t ucp_config_read(const char *env_prefix, const char *filename, ucp_config_t **config_p); } */
    private static final MethodHandle MH$ucp_config_read = h("ucp_config_read",
            WordCalls.call(3));
    /** {@snippet lang=c : ucs_status_t ucp_config_modify(ucp_config_t *config, const char *name, const char *value); } */
    private static final MethodHandle MH$ucp_config_modify = h("ucp_config_modify",
            WordCalls.call(3));
    /** {@snippet lang=c : void ucp_config_release(ucp_config_t *config); } */
    private static final MethodHandle MH$ucp_config_release = h("ucp_config_release",
            WordCalls.voidCall(1));
    /** {@snippet lang=c : ucs_status_t ucp_init_version(unsigned api_major_version, unsigned api_minor_version, const ucp_params_t *params, const ucp_config_t *config, ucp_context_h *context_p); } */
    private static final MethodHandle MH$ucp_init_version = h("ucp_init_version",
            WordCalls.call(5));
    /** {@snippet lang=c : void ucp_cleanup(ucp_context_h context_p); } */
    private static final MethodHandle MH$ucp_cleanup = h("ucp_cleanup", WordCalls.voidCall(1));
    /** {@snippet lang=c : ucs_status_t ucp_mem_map(ucp_context_h context, const ucp_mem_map_params_t *params, ucp_mem_h *memh_p); } */
    private static final MethodHandle MH$ucp_mem_map = h("ucp_mem_map",
            WordCalls.call(3));
    /** {@snippet lang=c : ucs_status_t ucp_mem_unmap(ucp_context_h context, ucp_mem_h memh); } */
    private static final MethodHandle MH$ucp_mem_unmap = h("ucp_mem_unmap",
            WordCalls.call(2));

    // ---- worker -----------------------------------------------------------------------------

    /** {@snippet lang=c : ucs_status_t ucp_worker_create(ucp_context_h context, const ucp_worker_params_t *params, ucp_worker_h *worker_p); } */
    private static final MethodHandle MH$ucp_worker_create = h("ucp_worker_create",
            WordCalls.call(3));
    /** {@snippet lang=c : void ucp_worker_destroy(ucp_worker_h worker); } */
    private static final MethodHandle MH$ucp_worker_destroy = h("ucp_worker_destroy",
            WordCalls.voidCall(1));
    /** {@snippet lang=c : ucs_status_t ucp_worker_get_address(ucp_worker_h worker, ucp_address_t **address_p, size_t *address_length_p); } */
    private static final MethodHandle MH$ucp_worker_get_address = h("ucp_worker_get_address",
            WordCalls.call(3));
    /** {@snippet lang=c : void ucp_worker_release_address(ucp_worker_h worker, ucp_address_t *address); } */
    private static final MethodHandle MH$ucp_worker_release_address = h("ucp_worker_release_address",
            WordCalls.voidCall(2));
    /** {@snippet lang=c : unsigned ucp_worker_progress(ucp_worker_h worker); } */
    private static final MethodHandle MH$ucp_worker_progress = h("ucp_worker_progress",
            WordCalls.call(1));
    /** {@snippet lang=c : ucs_status_t ucp_worker_get_efd(ucp_worker_h worker, int *fd); } */
    private static final MethodHandle MH$ucp_worker_get_efd = h("ucp_worker_get_efd",
            WordCalls.call(2));
    /** {@snippet lang=c : ucs_status_t ucp_worker_arm(ucp_worker_h worker); } */
    private static final MethodHandle MH$ucp_worker_arm = h("ucp_worker_arm",
            WordCalls.call(1));
    /** {@snippet lang=c : ucs_status_t ucp_worker_signal(ucp_worker_h worker); } */
    private static final MethodHandle MH$ucp_worker_signal = h("ucp_worker_signal",
            WordCalls.call(1));
    /** {@snippet lang=c : ucs_status_t ucp_worker_wait(ucp_worker_h worker); } */
    private static final MethodHandle MH$ucp_worker_wait = h("ucp_worker_wait",
            WordCalls.call(1));
    /** {@snippet lang=c : ucs_status_ptr_t ucp_worker_flush_nbx(ucp_worker_h worker, const ucp_request_param_t *param); } */
    private static final MethodHandle MH$ucp_worker_flush_nbx = h("ucp_worker_flush_nbx",
            WordCalls.call(2));
    /** {@snippet lang=c : ucs_status_t ucp_worker_set_am_recv_handler(ucp_worker_h worker, const ucp_am_handler_param_t *param); } */
    private static final MethodHandle MH$ucp_worker_set_am_recv_handler = h("ucp_worker_set_am_recv_handler",
            WordCalls.call(2));

    // ---- endpoint ---------------------------------------------------------------------------

    /** {@snippet lang=c : ucs_status_t ucp_ep_create(ucp_worker_h worker, const ucp_ep_params_t *params, ucp_ep_h *ep_p); } */
    private static final MethodHandle MH$ucp_ep_create = h("ucp_ep_create",
            WordCalls.call(3));
    /** {@snippet lang=c : ucs_status_ptr_t ucp_ep_close_nbx(ucp_ep_h ep, const ucp_request_param_t *param); } */
    private static final MethodHandle MH$ucp_ep_close_nbx = h("ucp_ep_close_nbx",
            WordCalls.call(2));
    /** {@snippet lang=c : ucs_status_ptr_t ucp_ep_flush_nbx(ucp_ep_h ep, const ucp_request_param_t *param); } */
    private static final MethodHandle MH$ucp_ep_flush_nbx = h("ucp_ep_flush_nbx",
            WordCalls.call(2));
    /** {@snippet lang=c : void ucp_ep_print_info(ucp_ep_h ep, FILE *stream); } */
    private static final MethodHandle MH$ucp_ep_print_info = h("ucp_ep_print_info",
            WordCalls.voidCall(2));

    // ---- tag and active-message communication -----------------------------------------------

    /** {@snippet lang=c : ucs_status_ptr_t ucp_tag_send_nbx(ucp_ep_h ep, const void *buffer, size_t count, ucp_tag_t tag, const ucp_request_param_t *param); } */
    private static final MethodHandle MH$ucp_tag_send_nbx = h("ucp_tag_send_nbx",
            WordCalls.call(5));
    /** {@snippet lang=c : ucs_status_ptr_t ucp_tag_recv_nbx(ucp_worker_h worker, void *buffer, size_t count, ucp_tag_t tag, ucp_tag_t tag_mask, const ucp_request_param_t *param); } */
    private static final MethodHandle MH$ucp_tag_recv_nbx = h("ucp_tag_recv_nbx",
            WordCalls.call(6));
    /** {@snippet lang=c : ucs_status_t ucp_tag_recv_request_test(void *request, ucp_tag_recv_info_t *info); } */
    private static final MethodHandle MH$ucp_tag_recv_request_test = h("ucp_tag_recv_request_test",
            WordCalls.call(2), CRITICAL);
    /** {@snippet lang=c : ucs_status_ptr_t ucp_am_send_nbx(ucp_ep_h ep, unsigned id, const void *header, size_t header_length, const void *buffer, size_t count, const ucp_request_param_t *param); } */
    private static final MethodHandle MH$ucp_am_send_nbx = h("ucp_am_send_nbx",
            WordCalls.call(7));
    /** {@snippet lang=c : ucs_status_ptr_t ucp_am_recv_data_nbx(ucp_worker_h worker, void *data_desc, void *buffer, size_t count, const ucp_request_param_t *param); } */
    private static final MethodHandle MH$ucp_am_recv_data_nbx = h("ucp_am_recv_data_nbx",
            WordCalls.call(5));
    /** {@snippet lang=c : void ucp_am_data_release(ucp_worker_h worker, void *data); } */
    private static final MethodHandle MH$ucp_am_data_release = h("ucp_am_data_release",
            WordCalls.voidCall(2));

    // ---- requests ---------------------------------------------------------------------------

    /** {@snippet lang=c : ucs_status_t ucp_request_check_status(void *request); } */
    private static final MethodHandle MH$ucp_request_check_status = h("ucp_request_check_status",
            WordCalls.call(1), CRITICAL);
    /** {@snippet lang=c : void ucp_request_cancel(ucp_worker_h worker, void *request); } */
    private static final MethodHandle MH$ucp_request_cancel = h("ucp_request_cancel",
            WordCalls.voidCall(2));
    /** {@snippet lang=c : void ucp_request_free(void *request); } */
    private static final MethodHandle MH$ucp_request_free = h("ucp_request_free",
            WordCalls.voidCall(1));

    // ---- libc, for ucp_ep_print_info ------------------------------------------------------------

    /** {@snippet lang=c : FILE *open_memstream(char **ptr, size_t *sizeloc); } */
    private static final MethodHandle MH$open_memstream = h("open_memstream",
            WordCalls.call(2));
    /** {@snippet lang=c : int fclose(FILE *stream); } */
    private static final MethodHandle MH$fclose = h("fclose", WordCalls.call(1));
    /** {@snippet lang=c : int poll(struct pollfd *fds, nfds_t nfds, int timeout); } */
    private static final MethodHandle MH$poll = h("poll", WordCalls.call(3));
    /** {@snippet lang=c : void free(void *ptr); } */
    private static final MethodHandle MH$free = h("free", WordCalls.voidCall(1));

    static int ucp_config_read(long envPrefix, long filename, long configOut) {
        try {
            return (byte) (long) MH$ucp_config_read.invokeExact(envPrefix, filename, configOut, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_config_read", t);
        }
    }

    static int ucp_config_modify(long config, long name, long value) {
        try {
            return (byte) (long) MH$ucp_config_modify.invokeExact(config, name, value, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_config_modify", t);
        }
    }

    static void ucp_config_release(long config) {
        try {
            MH$ucp_config_release.invokeExact(config, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_config_release", t);
        }
    }

    static int ucp_init_version(int major, int minor, long params, long config, long contextOut) {
        try {
            return (byte) (long) MH$ucp_init_version.invokeExact((long) major, (long) minor, params, config, contextOut, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_init_version", t);
        }
    }

    static void ucp_cleanup(long context) {
        try {
            MH$ucp_cleanup.invokeExact(context, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_cleanup", t);
        }
    }

    static int ucp_mem_map(long context, long params, long memhOut) {
        try {
            return (byte) (long) MH$ucp_mem_map.invokeExact(context, params, memhOut, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_mem_map", t);
        }
    }

    static int ucp_mem_unmap(long context, long memh) {
        try {
            return (byte) (long) MH$ucp_mem_unmap.invokeExact(context, memh, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_mem_unmap", t);
        }
    }

    static int ucp_worker_create(long context, long params, long workerOut) {
        try {
            return (byte) (long) MH$ucp_worker_create.invokeExact(context, params, workerOut, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_create", t);
        }
    }

    static void ucp_worker_destroy(long worker) {
        try {
            MH$ucp_worker_destroy.invokeExact(worker, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_destroy", t);
        }
    }

    static int ucp_worker_get_address(long worker, long addressOut, long lengthOut) {
        try {
            return (byte) (long) MH$ucp_worker_get_address.invokeExact(worker, addressOut, lengthOut, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_get_address", t);
        }
    }

    static void ucp_worker_release_address(long worker, long address) {
        try {
            MH$ucp_worker_release_address.invokeExact(worker, address, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_release_address", t);
        }
    }

    static int ucp_worker_progress(long worker) {
        try {
            return (int) (long) MH$ucp_worker_progress.invokeExact(worker, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_progress", t);
        }
    }

    static int ucp_worker_get_efd(long worker, long fdOut) {
        try {
            return (byte) (long) MH$ucp_worker_get_efd.invokeExact(worker, fdOut, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_get_efd", t);
        }
    }

    static int ucp_worker_arm(long worker) {
        try {
            return (byte) (long) MH$ucp_worker_arm.invokeExact(worker, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_arm", t);
        }
    }

    static int ucp_worker_signal(long worker) {
        try {
            return (byte) (long) MH$ucp_worker_signal.invokeExact(worker, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_signal", t);
        }
    }

    static int ucp_worker_wait(long worker) {
        try {
            return (byte) (long) MH$ucp_worker_wait.invokeExact(worker, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_wait", t);
        }
    }

    static long ucp_worker_flush_nbx(long worker, long param) {
        try {
            return (long) MH$ucp_worker_flush_nbx.invokeExact(worker, param, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_flush_nbx", t);
        }
    }

    static int ucp_worker_set_am_recv_handler(long worker, long param) {
        try {
            return (byte) (long) MH$ucp_worker_set_am_recv_handler.invokeExact(worker, param, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_worker_set_am_recv_handler", t);
        }
    }

    static int ucp_ep_create(long worker, long params, long epOut) {
        try {
            return (byte) (long) MH$ucp_ep_create.invokeExact(worker, params, epOut, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_ep_create", t);
        }
    }

    static long ucp_ep_close_nbx(long ep, long param) {
        try {
            return (long) MH$ucp_ep_close_nbx.invokeExact(ep, param, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_ep_close_nbx", t);
        }
    }

    static long ucp_ep_flush_nbx(long ep, long param) {
        try {
            return (long) MH$ucp_ep_flush_nbx.invokeExact(ep, param, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_ep_flush_nbx", t);
        }
    }

    static void ucp_ep_print_info(long ep, long file) {
        try {
            MH$ucp_ep_print_info.invokeExact(ep, file, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_ep_print_info", t);
        }
    }

    static long ucp_tag_send_nbx(long ep, long buffer, long count, long tag, long param) {
        try {
            return (long) MH$ucp_tag_send_nbx.invokeExact(ep, buffer, count, tag, param, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_tag_send_nbx", t);
        }
    }

    static long ucp_tag_recv_nbx(long worker, long buffer, long count, long tag, long mask, long param) {
        try {
            return (long) MH$ucp_tag_recv_nbx.invokeExact(worker, buffer, count, tag, mask, param, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_tag_recv_nbx", t);
        }
    }

    static int ucp_tag_recv_request_test(long request, long info) {
        try {
            return (byte) (long) MH$ucp_tag_recv_request_test.invokeExact(request, info, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_tag_recv_request_test", t);
        }
    }

    static long ucp_am_send_nbx(long ep, int id, long header, long headerLength, long buffer, long count, long param) {
        try {
            return (long) MH$ucp_am_send_nbx.invokeExact(ep, (long) id, header, headerLength, buffer, count, param, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_am_send_nbx", t);
        }
    }

    static long ucp_am_recv_data_nbx(long worker, long dataDesc, long buffer, long count, long param) {
        try {
            return (long) MH$ucp_am_recv_data_nbx.invokeExact(worker, dataDesc, buffer, count, param, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_am_recv_data_nbx", t);
        }
    }

    static void ucp_am_data_release(long worker, long data) {
        try {
            MH$ucp_am_data_release.invokeExact(worker, data, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_am_data_release", t);
        }
    }

    static int ucp_request_check_status(long request) {
        try {
            return (byte) (long) MH$ucp_request_check_status.invokeExact(request, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_request_check_status", t);
        }
    }

    static void ucp_request_cancel(long worker, long request) {
        try {
            MH$ucp_request_cancel.invokeExact(worker, request, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_request_cancel", t);
        }
    }

    static void ucp_request_free(long request) {
        try {
            MH$ucp_request_free.invokeExact(request, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("ucp_request_free", t);
        }
    }

    static long open_memstream(long bufferOut, long sizeOut) {
        try {
            return (long) MH$open_memstream.invokeExact(bufferOut, sizeOut, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("open_memstream", t);
        }
    }

    static int fclose(long file) {
        try {
            return (int) (long) MH$fclose.invokeExact(file, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("fclose", t);
        }
    }

    static int poll(long fds, long count, int timeoutMillis) {
        try {
            return (int) (long) MH$poll.invokeExact(fds, count, (long) timeoutMillis, 0L);
        } catch (Throwable t) {
            throw new AssertionError("poll", t);
        }
    }

    static void free(long pointer) {
        try {
            MH$free.invokeExact(pointer, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("free", t);
        }
    }
}
