/*
 * hadroNIO's one native function: java.base's private Module.implAddExportsToAllUnnamed or
 * implAddOpensToAllUnnamed, called through JNI, which does not check access - what the launcher
 * does for --add-exports. Loading this library costs a cold JVM about a millisecond; the same
 * calls made through FFM first bootstrap the foreign linker (~110-160 ms), in front of the JVM's
 * first connect. See io.hadronio.platform.NativeGrant.
 */
#include <jni.h>

JNIEXPORT void JNICALL
Java_io_hadronio_platform_NativeGrant_call(JNIEnv *env, jclass unused, jobject module, jstring method,
                                           jstring pkg) {
    (void) unused;
    const char *name = (*env)->GetStringUTFChars(env, method, NULL);
    if (name == NULL) {
        return; /* OutOfMemoryError pending */
    }
    jclass type = (*env)->GetObjectClass(env, module);
    jmethodID id = (*env)->GetMethodID(env, type, name, "(Ljava/lang/String;)V");
    (*env)->ReleaseStringUTFChars(env, method, name);
    if (id == NULL) {
        return; /* NoSuchMethodError pending: the Java side reports it */
    }
    (*env)->CallVoidMethod(env, module, id, pkg);
}
