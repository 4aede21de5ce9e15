/* A contact pair as a hard velocity constraint (contact_velocity.h). */
#include "contact/contact_velocity.h"

#include <math.h>

pd_vec3 pd_contact_pair_velocity(pd_vec3 d, pd_vec3 n, pd_real dc, pd_vec3 u, pd_real mu,
                                 pd_real dt, pd_contact_pair_sum* sum) {
    pd_real len = pd_v3_len(d);
    if (!(len > 0))
        return pd_v3(0, 0, 0);
    if (!(pd_v3_len2(n) > 0))
        n = pd_v3_scale(d, 1 / len);
    /* a pair acts once the candidates are closer than dc along n, within dc of each other across
     * it: on a flat face every pair then holds one plane, where |d| < dc left hollows between the
     * other body's particles that a particle fell into and was popped out of (contact_velocity.h)
     */
    pd_real dn = pd_v3_dot(d, n), across = sqrt(fmax(len * len - dn * dn, 0));
    if (sum->normal == 0 && (dn >= dc || across >= dc))
        return pd_v3(0, 0, 0);
    /* the normal change that closes the gap d . n - dc at the candidates, its total kept >= 0 */
    pd_real jn = fmax(sum->normal - (dn - dc) / dt, 0);
    pd_vec3 du = pd_v3_scale(n, jn - sum->normal);
    sum->normal = jn;
    /* the tangential total that would stop the slip, held to mu jn (Coulomb) */
    pd_vec3 un = pd_v3_add(u, du);
    pd_vec3 ut = pd_v3_madd(un, -pd_v3_dot(un, n), n);
    pd_vec3 target = pd_v3_sub(sum->tangent, ut);
    pd_real most = mu > 0 ? mu * jn : 0, len_t = pd_v3_len(target);
    if (len_t > most)
        target = pd_v3_scale(target, len_t > 0 ? most / len_t : 0);
    du = pd_v3_add(du, pd_v3_sub(target, sum->tangent));
    sum->tangent = target;
    return du;
}
