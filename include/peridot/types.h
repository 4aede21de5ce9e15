/* Peridot setup structs. Each comes from its pd_default_*_def() and is then edited; every
 * field carries its unit. A scene file (docs/scene-format.md) is parsed into these. */
#ifndef PERIDOT_TYPES_H
#define PERIDOT_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "math.h"
#include "status.h"

#define PD_NAME_MAX 64
#define PD_PATH_MAX 1024

/* Where an error came from: a JSON path such as "bodies[1].shape.radius", the file and line
 * when known, and a sentence saying what was expected. */
typedef struct pd_error {
    char file[PD_PATH_MAX];
    char path[256];
    int line; /* 0 when unknown */
    char message[768];
} pd_error;

/* ---- shapes (bodies, pin regions) ---- */
typedef enum pd_shape_type {
    PD_SHAPE_BOX,
    PD_SHAPE_SPHERE,
    PD_SHAPE_CYLINDER,
    PD_SHAPE_MESH,
} pd_shape_type;

typedef struct pd_shape_def {
    pd_shape_type type;
    pd_vec3 min, max;       /* box corners (m) */
    pd_vec3 center;         /* sphere centre (m) */
    pd_real radius;         /* sphere / cylinder radius (m) */
    pd_vec3 base;           /* cylinder base centre (m) */
    pd_vec3 axis;           /* cylinder axis direction (unit after parsing) */
    pd_real height;         /* cylinder height along axis (m) */
    char path[PD_PATH_MAX]; /* mesh file, resolved against the scene's folder */
    pd_real scale;          /* mesh uniform scale (1) */
    pd_vec3 translate;      /* mesh translation (m), applied after scale and rotation */
    pd_vec3 rotate_axis;    /* mesh rotation axis (unit) */
    pd_real rotate_degrees; /* mesh rotation angle (degrees) */
} pd_shape_def;
pd_shape_def pd_default_shape_def(void);

/* ---- materials ---- */
typedef enum pd_plasticity_model {
    PD_PLASTICITY_NONE,
    PD_PLASTICITY_DRUCKER_PRAGER,
    PD_PLASTICITY_VON_MISES,
    PD_PLASTICITY_CAM_CLAY,
    PD_PLASTICITY_HERSCHEL_BULKLEY,
} pd_plasticity_model;

/* The model of a material's `viscoelasticity` block. */
typedef enum pd_visco_model {
    PD_VISCO_NONE,
    PD_VISCO_PRONY,          /* a Prony series on E (Wang 2025) */
    PD_VISCO_HENCKY_MAXWELL, /* a Maxwell branch on the Hencky strain (Fang 2019 Sec. 5) */
} pd_visco_model;

/* Which Drucker-Prager cone a friction angle gives (src/constitutive/drucker_prager.h). */
typedef enum pd_dp_cone_kind {
    PD_CONE_COMPRESSION, /* through Mohr-Coulomb's triaxial-compression corners (the default) */
    PD_CONE_EXTENSION,   /* through its triaxial-extension corners (He 2017 Eq. 15) */
} pd_dp_cone_kind;

#define PD_MAX_PRONY           8
#define PD_METHOD_PARAMS_BYTES 2048

typedef struct pd_material_def {
    char name[PD_NAME_MAX];
    pd_real density;        /* kg/m^3 */
    pd_real youngs_modulus; /* Pa */
    pd_real poisson_ratio;  /* 1 */
    int has_lame;           /* 1 when given as lame [lambda, mu] instead of E, nu */
    pd_real lame_lambda;    /* Pa */
    pd_real lame_mu;        /* Pa */
    pd_plasticity_model plasticity;
    pd_real friction_angle;         /* degrees */
    pd_real cohesion;               /* Pa */
    pd_dp_cone_kind cone;           /* drucker_prager: the cone of friction_angle and cohesion */
    int volume_correction;          /* drucker_prager: 1 on, 0 off, -1 the method's (not given) */
    int rate_dependence;            /* drucker_prager: 0 none, 1 mu_i (`rate_dependence` block) */
    pd_real mui_mu_2;               /* mu_i: mu_2 (1); 0: mu_s + Jop 2006's mu_2 - mu_s */
    pd_real mui_i0;                 /* mu_i: I_0 (1) */
    pd_real mui_grain_diameter;     /* mu_i: d (m) */
    pd_real mui_solid_fraction;     /* mu_i: density / rho_s (1) */
    pd_real yield_stress;           /* Pa */
    pd_real hb_viscosity;           /* herschel_bulkley: eta (Pa s^h) */
    pd_real hb_exponent;            /* herschel_bulkley: h (1) */
    pd_real cc_tension_ratio;       /* cam_clay: beta (1) */
    pd_real cc_hardening;           /* cam_clay: xi (1) */
    pd_real cc_log_plastic_volume;  /* cam_clay: alpha_0 = ln J^P at the start (1) */
    pd_visco_model viscoelasticity; /* the `viscoelasticity` block's model, or NONE */
    int prony_count;
    pd_real prony_moduli[PD_MAX_PRONY]; /* Pa */
    pd_real prony_times[PD_MAX_PRONY];  /* s */
    /* hencky_maxwell (Fang 2019 Sec. 5): the non-equilibrated branch beside E and nu */
    pd_real maxwell_shear_modulus;        /* mu_N (Pa) */
    pd_real maxwell_bulk_modulus;         /* K_N = lambda_N + 2 mu_N / 3 (Pa) */
    pd_real maxwell_lambda;               /* lambda_N when the scene gave it instead of K_N */
    int maxwell_by_lambda;                /* 1: the scene gave `lambda` (written back so) */
    pd_real maxwell_deviatoric_viscosity; /* nu_d (Pa s) */
    pd_real maxwell_volumetric_viscosity; /* nu_v (Pa s) */
    /* Method-specific material keys, laid out by the method's material parameter table (a
     * struct of the method's at the table's offsets: numbers, choices, vectors, lists). */
    _Alignas(16) unsigned char method_params[PD_METHOD_PARAMS_BYTES];
} pd_material_def;
pd_material_def pd_default_material_def(void);

/* ---- bodies ---- */
typedef enum pd_sampling {
    PD_SAMPLING_GRID,
    PD_SAMPLING_JITTERED,
    PD_SAMPLING_POISSON_DISK,
    PD_SAMPLING_POISSON_DISK_RELAXED, /* poisson_disk, then shifted (sampling.c) */
} pd_sampling;

typedef enum pd_body_kind {
    PD_BODY_DYNAMIC,
    PD_BODY_FIXED, /* ghost particles that never move */
    PD_BODY_SHELL, /* one layer of particles */
    PD_BODY_ROD,   /* a line of particles, expanded with ghost particles */
} pd_body_kind;

typedef struct pd_keyframe {
    pd_real t;              /* s */
    pd_vec3 translate;      /* m, relative to the start */
    pd_vec3 rotate_axis;    /* unit */
    pd_real rotate_degrees; /* degrees, about the pin region's / collider's centre */
} pd_keyframe;

typedef struct pd_pin_def {
    pd_shape_def region; /* analytic shape; the body's particles inside follow the keyframes */
    int keyframe_count;  /* 0: fixed in place */
    pd_keyframe* keyframes;
    pd_real release; /* s: from the first step starting at or after it the particles are free;
                      * INFINITY: held for the whole run */
} pd_pin_def;

/* A change of material at a given time (bodies[i].material_changes[k]): from the first step
 * whose start time is >= t, the body's particles (those sampled inside `region`, or all of
 * them) are of `material`; the method decides what the particles keep (docs/methods/). */
typedef struct pd_material_change_def {
    pd_real t;           /* s */
    int material;        /* index into the scene's materials */
    int has_region;      /* 0: the whole body */
    pd_shape_def region; /* box, sphere or cylinder, tested on the sampled positions */
} pd_material_change_def;

typedef struct pd_body_def {
    char name[PD_NAME_MAX];
    int material;    /* index into the scene's materials */
    pd_real spacing; /* m */
    pd_shape_def shape;
    pd_sampling sampling;
    pd_vec3 velocity;         /* m/s */
    pd_vec3 angular_velocity; /* rad/s about the body's centre */
    pd_body_kind kind;
    int pin_count;
    pd_pin_def* pins;
    int material_change_count; /* in order of t (non-decreasing) */
    pd_material_change_def* material_changes;
} pd_body_def;
pd_body_def pd_default_body_def(void);

/* A continuous source (emitters[i]): from `start` until `stop` a disc nozzle pours material
 * along `direction` at `speed`, one lattice layer of particles each time the material in the
 * nozzle has moved one spacing (world/emitters.c); the particles join body `body` as its tail. */
typedef struct pd_emitter_def {
    int body;          /* index into the scene's bodies */
    int material;      /* index into the scene's materials (default: the body's) */
    pd_vec3 center;    /* the nozzle's centre (m) */
    pd_vec3 direction; /* unit: the flow, normal to the nozzle's disc */
    pd_real radius;    /* m */
    pd_real speed;     /* m/s */
    pd_real start;     /* s */
    pd_real stop;      /* s; INFINITY: until the run ends */
    pd_real spacing;   /* m (default: the body's) */
} pd_emitter_def;
pd_emitter_def pd_default_emitter_def(void);

/* ---- colliders ---- */
typedef enum pd_collider_type {
    PD_COLLIDER_PLANE,
    PD_COLLIDER_BOX,
    PD_COLLIDER_SPHERE,
    PD_COLLIDER_CYLINDER,
    PD_COLLIDER_MESH,
} pd_collider_type;

typedef enum pd_boundary {
    PD_BOUNDARY_SLIP,    /* project out, Coulomb friction on the tangential velocity */
    PD_BOUNDARY_NO_SLIP, /* sticks */
} pd_boundary;

typedef struct pd_collider_def {
    pd_collider_type type;
    pd_vec3 point, normal; /* plane: a point on it and its outward normal (unit) */
    pd_shape_def shape;    /* box / sphere / cylinder / mesh geometry */
    int inside;            /* 1: keep particles inside (container) */
    pd_real thickness;     /* mesh: wall behind an open mesh's faces (m); 0 for closed meshes */
    pd_boundary boundary;
    pd_real friction;         /* Coulomb coefficient (1) */
    pd_vec3 velocity;         /* m/s */
    pd_vec3 angular_velocity; /* rad/s about the collider's centre */
    int keyframe_count;
    pd_keyframe* keyframes;
} pd_collider_def;
pd_collider_def pd_default_collider_def(void);

/* ---- output ---- */
enum {
    PD_FORMAT_PLY = 1 << 0,
    PD_FORMAT_VTK = 1 << 1,
    PD_FORMAT_VTU = 1 << 2, /* VTK XML UnstructuredGrid, with a .pvd of the run's frames */
};
enum {
    PD_ATTR_VELOCITY = 1 << 0,
    PD_ATTR_MATERIAL = 1 << 1,
    PD_ATTR_BODY = 1 << 2,
    PD_ATTR_PLASTIC_STRAIN = 1 << 3,
    PD_ATTR_STRESS = 1 << 4,
    PD_ATTR_DENSITY = 1 << 5,
    PD_ATTR_ID = 1 << 6,
};
/* The attributes by their scene names: the i-th is bit i of PD_ATTR_*. */
#define PD_ATTRIBUTE_NAMES "velocity|material|body|plastic_strain|stress|density|id"

typedef struct pd_output_def {
    char dir[PD_PATH_MAX]; /* output folder */
    int every;             /* write every n-th frame */
    unsigned formats;      /* PD_FORMAT_* bits */
    unsigned attributes;   /* PD_ATTR_* bits */
    int checkpoint_every;  /* write a checkpoint every n-th frame (0: none) */
} pd_output_def;
pd_output_def pd_default_output_def(void);

/* ---- world ---- */
typedef struct pd_world_def {
    pd_real dt;      /* s */
    int dt_auto;     /* time.dt "auto": the method chooses dt (and, explicit, follows it) */
    pd_real fps;     /* frames per second of output */
    int frames;      /* frames to simulate */
    pd_vec3 gravity; /* m/s^2 */
    uint64_t seed;
    int threads;               /* 0: OpenMP's default */
    size_t memory_limit_bytes; /* refuse scenes estimated above this; 0: physical memory */
} pd_world_def;
pd_world_def pd_default_world_def(void);

#endif
